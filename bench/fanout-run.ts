/** One run of the socket fan-out bench, as its `BENCH` line carries it: latencies and call times in ms. */
export interface FanoutRun {
  /** Each delivery from the room's call to the frame's arrival. */
  p50: number;
  p99: number;
  /** The room's call itself, answered once its frames were sent. */
  callP50: number;
  /** A second room, its sockets opened through the test runner's default entrypoint rather than the hub's named one. */
  runnerDefaultP50: number;
  runnerDefaultP99: number;
  /** The bare object reached through the baseline Worker, which hands the upgrade on as the hub's Worker does. */
  bareObjectP50: number;
  bareObjectP99: number;
  bareCallP50: number;
  /** The bare object with its sockets opened on it directly. */
  directP50: number;
  directP99: number;
}
