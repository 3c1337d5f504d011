/** The polling plugin's version: its manifest's, and what a remote poller reports in its heartbeats. */
export const POLLING_VERSION = "0.1.0";
