// The parts of autocannon's API the benchmark uses (the package ships no types).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  export interface AutocannonRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    setupRequest?: (req: AutocannonRequest, context: object) => AutocannonRequest;
    /** Called with each response to this request, its body as text. */
    onResponse?: (status: number, body: string, context: object) => void;
  }

  export interface Options {
    url: string;
    connections?: number;
    duration?: number;
    timeout?: number;
    requests?: AutocannonRequest[];
  }

  export interface Result {
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    requests: { total: number };
    statusCodeStats: Record<string, { count: number }>;
  }

  export interface Instance extends EventEmitter {
    stop(): void;
  }

  function autocannon(opts: Options, cb: (err: Error | null, result: Result) => void): Instance;
  export default autocannon;
}
