/** The error envelope with this code (any operator-facing message). */
export function expectEnvelope(body: unknown, code: string): void {
  expect(body).toEqual({ error: { code, message: expect.any(String) } });
}

/** A response that is exactly this status with the error envelope of this code. */
export function expectError(res: { status: number; body: unknown }, status: number, code: string): void {
  expect({ status: res.status, body: res.body }).toEqual({ status, body: { error: { code, message: expect.any(String) } } });
}
