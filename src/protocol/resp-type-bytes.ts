/**
 * The first byte of each RESP2 and RESP3 reply type (the Redis protocol specification), for the
 * code that reads replies: the reply reader and the value sink that builds what it would read.
 */
export const SIMPLE = 0x2b // +
export const ERROR = 0x2d // -
export const INTEGER = 0x3a // :
export const BULK = 0x24 // $
export const ARRAY = 0x2a // *
export const NULL = 0x5f // _
export const BOOLEAN = 0x23 // #
export const DOUBLE = 0x2c // ,
export const BIG_NUMBER = 0x28 // (
export const BULK_ERROR = 0x21 // !
export const VERBATIM = 0x3d // =
export const MAP = 0x25 // %
export const SET = 0x7e // ~
export const PUSH = 0x3e // >
export const ATTRIBUTE = 0x7c // |
