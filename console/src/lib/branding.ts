// uiSettings applied to the page: colors as CSS custom properties (set through the CSSOM, which the
// Content-Security-Policy allows where inline styles are not), with a readable text color picked for each
// background; logos and buttons are read by the layout from the same settings.

export interface NavBarButton {
  text: string;
  link: string;
  icon: string;
  position: "TopStart" | "TopEnd" | "BottomStart" | "BottomEnd";
}

export interface ConsoleSettings {
  platformVersion?: string;
  /** cloud.releaseChannel of the Config, when set. */
  releaseChannel?: string;
  /** Whether the Config turns on the apps catalog (repositories or predefined apps) and cost control. */
  apps?: boolean;
  costControl?: boolean;
  logoURL?: string;
  smallLogoURL?: string;
  faviconURL?: string;
  logoBackgroundColor?: string;
  primaryColor?: string;
  sidebarColor?: string;
  accentColor?: string;
  legalTemplate?: string;
  navBarButtons: NavBarButton[];
}

export async function loadSettings(): Promise<ConsoleSettings> {
  try {
    const response = await fetch("/console/settings", { headers: { Accept: "application/json" } });
    if (response.ok) return (await response.json()) as ConsoleSettings;
  } catch {
    // the defaults below
  }
  return { navBarButtons: [] };
}

/** The color as [r, g, b] (0-255) through the browser's own parser, or undefined when it is not a color. */
function rgbOf(color: string): [number, number, number] | undefined {
  if (!CSS.supports("color", color)) return undefined;
  const probe = document.createElement("canvas").getContext("2d");
  if (!probe) return undefined;
  probe.fillStyle = "#000";
  probe.fillStyle = color;
  const value = probe.fillStyle;
  const hex = /^#([0-9a-f]{6})$/i.exec(value);
  if (hex) {
    const n = Number.parseInt(hex[1], 16);
    return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
  }
  const rgb = /rgba?\((\d+),\s*(\d+),\s*(\d+)/.exec(value);
  return rgb ? [Number(rgb[1]), Number(rgb[2]), Number(rgb[3])] : undefined;
}

/** WCAG relative luminance. */
function luminance([r, g, b]: [number, number, number]): number {
  const channel = (c: number) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
}

/** Black or white, whichever reads better on the color. */
export function textOn(color: string): string | undefined {
  const rgb = rgbOf(color);
  if (!rgb) return undefined;
  const l = luminance(rgb);
  return (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) ? "#151515" : "#ffffff";
}

export function applyBranding(settings: ConsoleSettings): void {
  const root = document.documentElement;
  const set = (name: string, value: string | undefined) => {
    if (value) root.style.setProperty(name, value);
    else root.style.removeProperty(name);
  };
  const color = (value: string | undefined) => (value && CSS.supports("color", value) ? value : undefined);
  const primary = color(settings.primaryColor);
  if (primary) {
    for (const token of ["default", "hover", "clicked"]) set(`--pf-t--global--color--brand--${token}`, primary);
    set("--pf-t--global--text--color--link--default", primary);
    set("--pf-t--global--text--color--link--hover", primary);
    set("--pf-t--global--text--color--on-brand--default", textOn(primary));
    set("--pf-t--global--text--color--on-brand--hover", textOn(primary));
    set("--pf-t--global--text--color--on-brand--clicked", textOn(primary));
  }
  const sidebar = color(settings.sidebarColor);
  set("--vcp-sidebar-color", sidebar);
  set("--vcp-sidebar-text", sidebar && textOn(sidebar));
  root.toggleAttribute("data-sidebar-color", !!sidebar);
  const accent = color(settings.accentColor);
  set("--vcp-accent-color", accent);
  set("--vcp-accent-text", accent && textOn(accent));
  root.toggleAttribute("data-accent-color", !!accent);
  set("--vcp-logo-background", color(settings.logoBackgroundColor));
}
