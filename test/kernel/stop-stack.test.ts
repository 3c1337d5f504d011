import { StopStack } from "../../core/kernel/StopStack.js";
import { JsonLogger } from "../../core/logging/Logger.js";

describe("the boot's stop stack", () => {
  it("undoes last-in-first-out, logs a failing step by name and still runs the others, once", async () => {
    const lines: string[] = [];
    const stops = new StopStack(new JsonLogger("error", "core", (line) => lines.push(line)));
    const done: string[] = [];
    stops.push("store", async () => void done.push("store"));
    stops.push("http", async () => {
      throw new Error("socket already closed");
    });
    stops.push("plugins", async () => void done.push("plugins"));
    await stops.unwind();
    expect(done).toEqual(["plugins", "store"]);
    expect(lines.map((l) => JSON.parse(l) as { msg: string; error: { message: string } })).toEqual([
      expect.objectContaining({ msg: "http stop failed", error: expect.objectContaining({ message: "socket already closed" }) }),
    ]);
    await stops.unwind();
    expect(done).toEqual(["plugins", "store"]);
  });
});
