/**
 * The driver's clock for batch timestamps and progress timings. A test may replace `now` to see
 * which phases of a batch are timed; nothing else does.
 */
export const clock = {
  now: (): number => Date.now(),
};
