// The server's validation errors of the platform Config (a 422 Status), placed at their YAML lines: each cause's
// message ends with "(line N)" or "(line N, column M)" when the server could place it.

export interface LineError {
  line?: number;
  field: string;
  message: string;
}

interface Cause {
  field?: string;
  message?: string;
}

export function configLineErrors(status: { message?: string; details?: { causes?: Cause[] } }): LineError[] {
  const causes = status.details?.causes ?? [];
  const out: LineError[] = causes.map((cause) => {
    const message = cause.message ?? "";
    const match = /\(line (\d+)(?:, column \d+)?\)/.exec(message);
    return { line: match ? Number(match[1]) : undefined, field: cause.field ?? "", message };
  });
  if (out.length === 0 && status.message) out.push({ field: "", message: status.message });
  return out.sort((a, b) => (a.line ?? 1e9) - (b.line ?? 1e9));
}
