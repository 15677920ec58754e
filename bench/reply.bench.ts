/**
 * In process: reply encoding as the BF.* commands do it, per read chunk: 16 × `:1` then take()
 * (BF.ADD -P 16), a 10-element array of `:0`/`:1` (BF.MADD), integers, bulk strings.
 *
 * Run: npm run bench:reply
 */
import { ReplyWriter } from '../src/protocol/reply-writer.js'
import { ONE, ZERO } from '../src/protocol/shared-replies.js'
import { runSuite } from './run-suite.js'

const writer = new ReplyWriter()
const bulk16 = Buffer.from('0123456789abcdef')
let bytes = 0

runSuite('Reply writer (items/s = replies/s)', [
  {
    name: '16 × :1 + take() (BF.ADD -P 16)',
    items: 16,
    fn: () => {
      for (let i = 0; i < 16; i++) writer.raw(ONE)
      bytes += writer.take()!.length
    },
  },
  {
    name: '16 × (*10 + 10 × :0/:1) + take() (BF.MADD -P 16)',
    items: 16,
    fn: () => {
      for (let i = 0; i < 16; i++) {
        writer.array(10)
        for (let j = 0; j < 10; j++) writer.raw((j & 1) === 0 ? ONE : ZERO)
      }
      bytes += writer.take()!.length
    },
  },
  {
    name: '16 × integer(123456) + take()',
    items: 16,
    fn: () => {
      for (let i = 0; i < 16; i++) writer.integer(123456)
      bytes += writer.take()!.length
    },
  },
  {
    name: '16 × bulk(16 B) + take()',
    items: 16,
    fn: () => {
      for (let i = 0; i < 16; i++) writer.bulk(bulk16)
      bytes += writer.take()!.length
    },
  },
])
if (bytes === 0) throw new Error('the writer produced nothing')
