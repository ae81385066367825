// Trimming a run of one character from the ends of a text. The obvious regular expressions (/-+$/, /=+$/) try every
// start inside a long run and rescan the rest of it from each: quadratic on text an attacker sends (a base64 value
// of "=", a group name of "-").

/** `text` without the run of `char` at its end. */
export function trimEndChar(text: string, char: string): string {
  let end = text.length;
  while (end > 0 && text[end - 1] === char) end--;
  return end === text.length ? text : text.slice(0, end);
}

/** `text` without the runs of `char` at its start and its end. */
export function trimChar(text: string, char: string): string {
  let start = 0;
  while (start < text.length && text[start] === char) start++;
  return trimEndChar(text.slice(start), char);
}
