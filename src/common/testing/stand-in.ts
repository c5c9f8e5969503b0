/**
 * Unit-spec helpers shared by the features' fakes (src/<feature>/testing/). Nothing here touches a
 * database, Temporal or the network.
 */

/**
 * Hands a fake to a constructor that types the whole collaborator. The fake declares the part it
 * implements (`implements Pick<RunsRepository, 'findById' | …>`), so a changed signature of the real
 * class breaks the build there; a method the fake lacks fails the spec that reaches it, loudly.
 */
export function standIn<T>(fake: Partial<T>): T {
  return new Proxy(fake as object, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (value === undefined && typeof property === 'string' && property !== 'then' && !(property in target)) {
        throw new Error(`the fake has no ${property}: add it (typed from the real class) to use it`);
      }
      return value;
    },
  }) as T;
}
