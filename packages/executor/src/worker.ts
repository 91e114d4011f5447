export default async function run(): Promise<void> {}
