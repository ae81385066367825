// The runnable parts of a README section: ```sh blocks (shell commands, in order) and ```yaml <file> blocks (files
// the text asks you to save under that name). Other blocks (```text output and the like) are left out.

export interface ReadmeBlock {
  kind: "sh" | "file";
  /** For files: the name after the language. */
  file?: string;
  text: string;
}

/** The section under `heading` (a `## ` line) up to the next `## ` heading, subsections included. */
export function readmeSection(markdown: string, heading: string): string {
  const lines = markdown.split("\n");
  const start = lines.indexOf(`## ${heading}`);
  if (start < 0) throw new Error(`README has no section "## ${heading}"`);
  const end = lines.findIndex((line, index) => index > start && line.startsWith("## "));
  return lines.slice(start, end < 0 ? undefined : end).join("\n");
}

/** The subsection `### heading` of a section (to the next `##`/`###` heading). */
export function readmeSubsection(markdown: string, heading: string): string {
  const lines = markdown.split("\n");
  const start = lines.indexOf(`### ${heading}`);
  if (start < 0) throw new Error(`README has no subsection "### ${heading}"`);
  const end = lines.findIndex((line, index) => index > start && /^#{2,3} /.test(line));
  return lines.slice(start, end < 0 ? undefined : end).join("\n");
}

/** Fenced blocks in order. */
export function runnableBlocks(section: string): ReadmeBlock[] {
  const blocks: ReadmeBlock[] = [];
  const fence = /^```([^\n]*)\n([\s\S]*?)^```$/gm;
  for (const match of section.matchAll(fence)) {
    const [language, file] = match[1].trim().split(/\s+/);
    if (language === "sh") blocks.push({ kind: "sh", text: match[2] });
    else if (language === "yaml" && file) blocks.push({ kind: "file", file, text: match[2] });
  }
  return blocks;
}

/** A bash script that writes the files and runs the commands of the blocks, in order. */
export function scriptOf(blocks: ReadmeBlock[]): string {
  return blocks
    .map((block) => {
      if (block.kind === "sh") return block.text;
      // A quoted heredoc writes the file byte for byte as the README shows it.
      const marker = "README_FILE_END";
      if (block.text.includes(marker)) throw new Error(`${block.file} contains ${marker}`);
      return `cat > '${block.file}' <<'${marker}'\n${block.text}${marker}\n`;
    })
    .join("");
}
