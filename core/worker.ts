/**
 * The part of core's public API that a worker thread may load: plain modules with no Ts.ED, no store and nothing that
 * starts a kernel (core/index.ts re-exports all of it). A plugin's worker module (the events plugin's ingest workers)
 * imports from here, so a worker starts in milliseconds and holds only what it runs.
 */
export { Journal, JournalReader, RECORD_HEADER_BYTES } from "./journal/Journal.js";
export type { FsyncPolicy, JournalOptions, JournalRecord, JournalStats } from "./journal/Journal.js";
export { timeOrderedUuid } from "./util/uuid.js";
export { compileSafeRegex, regexUnsafeReason, REGEX_MAX_COUNT, REGEX_MAX_GROUP_REPEAT } from "./util/regexSafety.js";
export { startUdpReader, sumMirrorCounts } from "./util/udpReader.js";
export type { UdpReader, UdpReaderOptions, MirrorTarget, MirrorCount } from "./util/udpReader.js";
export { compiledModuleUrl } from "./util/workerModule.js";
export { batchedUdpAvailable, bindDatagramSocket } from "./util/datagramSocket.js";
export type { DatagramSocket, DatagramSocketOptions, Relay } from "./util/datagramSocket.js";
export { copyText } from "./store/copyText.js";
export { ipv4Number } from "./util/net.js";
export { JournalPart, journalDirs } from "./journal/JournalPart.js";
export type { JournalPartState } from "./journal/JournalPart.js";
