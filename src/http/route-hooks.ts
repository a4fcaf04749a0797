/** A route's hooks of one kind as a list: Fastify takes one hook, an array of them, or none. */
export function hookList<T>(hooks: T | T[] | undefined): T[] {
  return hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];
}
