// The small HTML pages the login endpoints show a person: a result or refusal, and a form that posts itself
// (SAML HTTP-POST binding, delivery of a Login key to the CLI's loopback address). Every value is escaped; the
// Content-Security-Policy allows only the page's own inline style and its one nonce'd script.

import { randomBytes } from "node:crypto";

export interface HtmlPage {
  html: string;
  headers: Record<string, string>;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function document(title: string, body: string, nonce?: string): HtmlPage {
  const script = nonce ? ` 'nonce-${nonce}'` : "";
  return {
    html: `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1d2330}
h1{font-size:1.4rem}p{line-height:1.5}code{background:#eef;padding:0 .2rem}</style></head>
<body>${body}</body></html>
`,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "referrer-policy": "no-referrer",
      "x-content-type-options": "nosniff",
      "content-security-policy": `default-src 'none'; style-src 'unsafe-inline'; script-src${script || " 'none'"}; frame-ancestors 'none'; base-uri 'none'`,
    },
  };
}

/** A page with a heading and paragraphs. */
export function messagePage(title: string, paragraphs: string[]): HtmlPage {
  return formPage(title, paragraphs, "");
}

/** A page with a heading, paragraphs and a form the caller built (its values escaped by the caller). */
export function formPage(title: string, paragraphs: string[], formHtml: string): HtmlPage {
  return document(
    title,
    `<h1>${escapeHtml(title)}</h1>\n${paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join("\n")}\n${formHtml}`,
  );
}

/** A form that submits itself to `action` (a button for browsers without script). */
export function autoPostPage(title: string, action: string, fields: Record<string, string>): HtmlPage {
  const nonce = randomBytes(16).toString("base64");
  const inputs = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join("\n");
  return document(
    title,
    `<h1>${escapeHtml(title)}</h1>
<form id="continue" method="post" action="${escapeHtml(action)}">
${inputs}
<noscript><button type="submit">Continue</button></noscript>
</form>
<script nonce="${nonce}">document.getElementById("continue").submit();</script>`,
    nonce,
  );
}
