/**
 * LATENCY DOCTOR's report, as redis 7.0 latency.c createLatencyReport writes it: a line per event
 * with its statistics, then the advice the events call for. The texts are redis's, word for word
 * (its typos too); the advice about events bfs never records (fork, eviction, AOF rewrites) is
 * left out, as redis would never give it here either.
 */
import { readFileSync } from 'node:fs'
import type { LatencyMonitor } from '../../runtime/latency-monitor.js'

/** What the report reads of the configuration. */
export interface DoctorConfig {
  readonly slowlogSlowerThan: number
  readonly appendfsync: string
}

/** bfs's cron frequency (redis `hz`, 10 by default; fixed in bfs). */
const HZ = 10

const DISABLED =
  "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n"
const NOTHING =
  'Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n'
const NO_FIX =
  "\nWhile there are latency events logged, I'm not able to suggest any easy fix. Please use the Redis community to get some help, providing this report in your help request.\n"

/** redis's advice paragraphs, in the order it prints them. */
const ADVICE = {
  slowlogInspect:
    '- Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n',
  scheduler:
    '- The system is slow to execute Redis code paths not containing system calls. This usually means the system does not provide Redis CPU time to run for long periods. You should try to:\n' +
    '  1) Lower the system load.\n' +
    '  2) Use a computer / VM just for Redis if you are running other software in the same system.\n' +
    '  3) Check if you have a "noisy neighbour" problem.\n' +
    "  4) Check with 'redis-cli --intrinsic-latency 100' what is the intrinsic latency in your system.\n" +
    '  5) Check if the problem is allocator-related by recompiling Redis with MALLOC=libc, if you are using Jemalloc. However this may create fragmentation problems.\n',
  localDisk:
    '- It is strongly advised to use local disks for persistence, especially if you are using AOF. Remote disks provided by platform-as-a-service providers are known to be slow.\n',
  diskContention:
    '- Try to lower the disk contention. This is often caused by other disk intensive processes running in the same computer (including other Redis instances).\n',
  relaxFsync:
    "- Your fsync policy is set to 'always'. It is very hard to get good performances with such a setup, if possible try to relax the fsync policy to 'onesec'.\n",
  hz: "- In order to make the Redis keys expiring process more incremental, try to set the 'hz' configuration parameter to 100 using 'CONFIG SET hz 100'.\n",
  largeObjects:
    '- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into multiple smaller objects.\n',
  disableThp:
    "- I detected a non zero amount of anonymous huge pages used by your process. This creates very serious latency events in different conditions, especially when Redis is persisting on disk. To disable THP support use the command 'echo never > /sys/kernel/mm/transparent_hugepage/enabled', make sure to also add it into /etc/rc.local so that the command will be executed again after a reboot. Note that even if you have already disabled THP, you still need to restart the Redis process to get rid of the huge pages already created.\n",
} as const

/** Which advice an event calls for, and how many advices redis counts for it. */
interface Advice {
  slowlogEnabled?: boolean
  slowlogTuning?: boolean
  slowlogInspect?: boolean
  scheduler?: boolean
  localDisk?: boolean
  diskContention?: boolean
  relaxFsync?: boolean
  hz?: boolean
  largeObjects?: boolean
  disableThp?: boolean
  count: number
}

/** redis createLatencyReport. */
export function latencyReport(
  monitor: LatencyMonitor,
  config: DoctorConfig,
  nowSeconds = Math.floor(Date.now() / 1000),
): string {
  const threshold = monitor.threshold()
  if (monitor.size === 0 && threshold === 0) return DISABLED
  let report = ''
  let eventnum = 0
  const advice: Advice = { count: 0 }
  for (const [event, series] of monitor.entries()) {
    eventnum++
    if (eventnum === 1)
      report +=
        "Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n"
    const ls = monitor.analyze(event, nowSeconds)
    report += `${eventnum}. ${event}: ${ls.samples} latency spikes (average ${ls.avg}ms, mean deviation ${ls.mad}ms, period ${(ls.period / ls.samples).toFixed(2)} sec). Worst all time event ${series.max}ms.`
    adviseFor(event.toLowerCase(), advice, config, threshold)
    report += '\n'
  }
  if (anonHugePagesBytes() > 0) {
    advice.disableThp = true
    advice.count++
  }
  if (eventnum === 0 && advice.count === 0) return report + NOTHING
  if (eventnum > 0 && advice.count === 0) return report + NO_FIX
  return report + '\nI have a few advices for you:\n\n' + adviceText(advice, config, threshold)
}

/** The per-event part of redis createLatencyReport, for the events bfs can record. */
function adviseFor(event: string, advice: Advice, config: DoctorConfig, threshold: number): void {
  if (event === 'command') {
    if (config.slowlogSlowerThan < 0) {
      advice.slowlogEnabled = true
      advice.count++
    } else if (Math.trunc(config.slowlogSlowerThan / 1000) > threshold) {
      advice.slowlogTuning = true
      advice.count++
    }
    advice.slowlogInspect = advice.largeObjects = true
    advice.count += 2
  } else if (event === 'fast-command') {
    advice.scheduler = true
    advice.count++
  } else if (event === 'aof-fsync-always') {
    advice.relaxFsync = true
    advice.count++
  } else if (event === 'aof-fstat' || event === 'rdb-unlink-temp-file') {
    advice.diskContention = advice.localDisk = true
    advice.count += 2
  } else if (event === 'expire-cycle') {
    advice.hz = advice.largeObjects = true
    advice.count += 2
  }
}

function adviceText(advice: Advice, config: DoctorConfig, threshold: number): string {
  let text = ''
  if (advice.slowlogEnabled) {
    text += `- There are latency issues with potentially slow commands you are using. Try to enable the Slow Log Redis feature using the command 'CONFIG SET slowlog-log-slower-than ${threshold * 1000}'. If the Slow log is disabled Redis is not able to log slow commands execution for you.\n`
  }
  if (advice.slowlogTuning) {
    text += `- Your current Slow Log configuration only logs events that are slower than your configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than ${threshold * 1000}'.\n`
  }
  if (advice.slowlogInspect) text += ADVICE.slowlogInspect
  if (advice.scheduler) text += ADVICE.scheduler
  if (advice.localDisk) text += ADVICE.localDisk
  if (advice.diskContention) text += ADVICE.diskContention
  if (advice.relaxFsync && config.appendfsync === 'always') text += ADVICE.relaxFsync
  if (advice.hz && HZ < 100) text += ADVICE.hz
  if (advice.largeObjects) text += ADVICE.largeObjects
  if (advice.disableThp) text += ADVICE.disableThp
  return text
}

/** redis THPGetAnonHugePagesSize: the AnonHugePages lines of /proc/self/smaps, in bytes (0 where there is none). */
function anonHugePagesBytes(): number {
  try {
    let kib = 0
    for (const match of readFileSync('/proc/self/smaps', 'latin1').matchAll(/^AnonHugePages:\s+(\d+) kB/gm))
      kib += Number(match[1])
    return kib * 1024
  } catch {
    return 0
  }
}
