/** `promise`'s value, or undefined once `ms` have passed without it (0 or less, or infinite: no limit). */
export async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  if (!(ms > 0) || ms === Number.POSITIVE_INFINITY) return promise;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
