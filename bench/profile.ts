/**
 * Summarizes a V8 CPU profile (from `npm run bench -- --profile`): where the
 * time went, by function (self time) and by package or Folio file.
 *
 *   tsx bench/profile.ts bench/results/<run>/profiles/<scenario>.cpuprofile [--top 30]
 *   tsx bench/profile.ts <profile> --lines apply      (one function's self time by line)
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
  /** Self samples by line (1-based) of the function's file. */
  positionTicks?: { line: number; ticks: number }[];
}

interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

function area(url: string, name: string): string {
  if (url === '') return name.startsWith('(') ? name : 'native';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const folio = /\/(src\/.+)$/.exec(url);
  if (folio) return folio[1]!;
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0];
  return url;
}

export function summarize(profile: Profile, top = 30): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  // Idle time (the server waiting between scenarios) is left out of the percentages.
  const idle = profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').reduce((a, n) => a + (self.get(n.id) ?? 0), 0);
  for (const n of profile.nodes) if (n.callFrame.functionName === '(idle)') self.delete(n.id);
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const fn = new Map<string, number>();
  const areas = new Map<string, number>();
  for (const [id, t] of self) {
    const n = byId.get(id)!;
    const { functionName, url, lineNumber } = n.callFrame;
    const key = `${functionName || '(anonymous)'}  ${url ? `${url.replace(/^.*\/(node_modules|src|bench)\//, '$1/')}:${lineNumber + 1}` : ''}`;
    fn.set(key, (fn.get(key) ?? 0) + t);
    const a = area(url, functionName);
    areas.set(a, (areas.get(a) ?? 0) + t);
  }
  const pct = (t: number) => `${((100 * t) / total).toFixed(1).padStart(5)} %`;
  const list = (m: Map<string, number>, n: number) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, t]) => `${pct(t)}  ${k}`)
      .join('\n');
  // Inclusive time of each function (once per stack, so recursion is not counted twice).
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const inclusive = new Map<string, number>();
  for (const [id, t] of self) {
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const { functionName, url, lineNumber } = byId.get(cur)!.callFrame;
      if (!url.includes('/src/') && !url.includes('node_modules/fastify/') && !url.includes('node_modules/pino')) continue;
      const key = `${functionName || '(anonymous)'}  ${url.replace(/^.*\/(node_modules|src|bench)\//, '$1/')}:${lineNumber + 1}`;
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + t);
    }
  }
  return `busy ${(total / 1e6).toFixed(1)} s sampled (idle ${(idle / 1e6).toFixed(1)} s left out)\n\nby area (self time):\n${list(areas, 20)}\n\nby function (self time):\n${list(fn, top)}\n\nFolio, Fastify and pino functions (inclusive time):\n${list(inclusive, top)}\n`;
}

/**
 * The self time of the functions named `name`, by line of their (compiled)
 * file. A call into native code, such as a better-sqlite3 statement's `run`,
 * counts as the self time of the line that made it: this tells which
 * statement of a function the time went to.
 */
export function byLine(profile: Profile, name: string): string {
  const lines = new Map<string, { ticks: number; text: string }>();
  const sources = new Map<string, string[]>();
  const sourceOf = (url: string) => {
    if (!sources.has(url)) {
      let text: string[] = [];
      try {
        text = readFileSync(new URL(url), 'utf8').split('\n');
      } catch {
        // not a file (node: internals), or gone
      }
      sources.set(url, text);
    }
    return sources.get(url)!;
  };
  for (const n of profile.nodes) {
    if (n.callFrame.functionName !== name) continue;
    const { url } = n.callFrame;
    for (const { line, ticks } of n.positionTicks ?? []) {
      const key = `${url.replace(/^.*\/(node_modules|src|bench)\//, '$1/')}:${line}`;
      const entry = lines.get(key) ?? { ticks: 0, text: (sourceOf(url)[line - 1] ?? '').trim().slice(0, 100) };
      entry.ticks += ticks;
      lines.set(key, entry);
    }
  }
  const total = [...lines.values()].reduce((a, e) => a + e.ticks, 0);
  if (total === 0) return `no samples of a function named "${name}"\n`;
  // Under tsx the lines are those of the transpiled text, which the file does not show.
  const caveat = [...sources.keys()].some((url) => url.endsWith('.ts'))
    ? 'note: a TypeScript file profiled under tsx: its lines are those of the transpiled code, not of the file; profile compiled code (npm run bench -- --profile)\n'
    : '';
  return `${caveat}self time of ${name} by line (${total} samples):\n${[...lines.entries()]
    .sort((a, b) => b[1].ticks - a[1].ticks)
    .map(([k, e]) => `${((100 * e.ticks) / total).toFixed(1).padStart(5)} %  ${k}  ${e.text}`)
    .join('\n')}\n`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '30' }, lines: { type: 'string' } },
  });
  for (const file of positionals) {
    const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
    const text = values.lines !== undefined ? byLine(profile, values.lines) : summarize(profile, Number(values.top));
    process.stdout.write(`== ${file}\n${text}\n`);
  }
}
