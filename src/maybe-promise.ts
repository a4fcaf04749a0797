/**
 * A value a store answers at once (SQLite, on the request thread) or later
 * (a store over the network). A read answered at once goes from the store
 * to the response without a promise: the three promises of an `async`
 * store read, service and route handler cost `GET /v1/documents/{id}` and
 * a list page about an eighth of their rate (bench/README.md, "Reads that
 * wait for nothing").
 */
export type MaybePromise<T> = T | Promise<T>;

/** `fn` of the value, at once if it is there, else when it comes. */
export function mapMaybe<T, U>(value: MaybePromise<T>, fn: (value: T) => U): MaybePromise<U> {
  return value instanceof Promise ? value.then(fn) : fn(value);
}
