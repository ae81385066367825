// uiSettings.legalTemplate is HTML: parsed in an inert <template> (nothing loads or runs there) and rebuilt from an
// allow list of text tags, with no attribute kept but a link's http(s)/mailto href. Scripts, handlers, styles,
// images and forms never reach the page (and the page's CSP would block scripts besides).

const TAGS = new Set([
  "a",
  "abbr",
  "b",
  "blockquote",
  "br",
  "code",
  "div",
  "em",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "hr",
  "i",
  "li",
  "ol",
  "p",
  "pre",
  "small",
  "span",
  "strong",
  "sub",
  "sup",
  "u",
  "ul",
]);

function clean(source: Node, target: Node): void {
  for (const child of Array.from(source.childNodes)) {
    if (child.nodeType === Node.TEXT_NODE) {
      target.appendChild(document.createTextNode(child.textContent ?? ""));
      continue;
    }
    if (child.nodeType !== Node.ELEMENT_NODE) continue;
    const tag = (child as Element).tagName.toLowerCase();
    if (tag === "script" || tag === "style" || tag === "template") continue;
    if (!TAGS.has(tag)) {
      clean(child, target); // unknown wrapper: keep its text
      continue;
    }
    const element = document.createElement(tag);
    if (tag === "a") {
      const href = (child as Element).getAttribute("href") ?? "";
      if (/^(https?:|mailto:)/i.test(href.trim())) {
        element.setAttribute("href", href.trim());
        element.setAttribute("rel", "noopener noreferrer");
        element.setAttribute("target", "_blank");
      }
    }
    clean(child, element);
    target.appendChild(element);
  }
}

export function sanitizeHtml(html: string): string {
  const template = document.createElement("template");
  template.innerHTML = html;
  const out = document.createElement("div");
  clean(template.content, out);
  return out.innerHTML;
}
