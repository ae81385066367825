// The lines of a batch of event lines as the audit pipe hands it to the worker (UTF-8, each line ending in a
// newline), one string each. Decoded line by line: each string is flat and independent, where decoding the batch
// whole and splitting it costs three times the CPU and keeps the whole batch alive while any line is spooled.

const NEWLINE = 10;

export function batchLines(bytes: Buffer): string[] {
  const lines: string[] = [];
  let start = 0;
  for (let end = bytes.indexOf(NEWLINE); end !== -1; end = bytes.indexOf(NEWLINE, start)) {
    lines.push(bytes.toString("utf8", start, end));
    start = end + 1;
  }
  return lines;
}
