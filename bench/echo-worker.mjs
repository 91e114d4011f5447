// The piscina baseline's task: returns its input (one round trip, no work).
export default function echo(input) {
  return input;
}
