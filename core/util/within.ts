/** `p`'s value, or undefined when it takes longer than `ms` (it is left to settle on its own; a rejection after that is ignored). */
export async function within<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  p.catch(() => undefined);
  try {
    return await Promise.race([p, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
