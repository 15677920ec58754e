/** How bfs presents itself to tools that look for RedisBloom: MODULE LIST, HELLO, INFO modules. */
export const MODULE_NAME = 'bf'
/** RedisBloom 2.4.23 as MODULE LIST encodes it (major*10000 + minor*100 + patch). */
export const MODULE_VERSION = 20423
