export default async function globalTeardown() {
  await globalThis.__NMS_TEST_PG__?.stop();
}
