'use strict';
// mqlab's interop driver for the Node.js RocketMQ client ali-ons: the same program runs
// against a real RocketMQ 4.9.3 broker and against `python -m mqlab serve`, and prints one
// JSON object per line.
//
//   node client.js produce NAMESRV TOPIC GROUP COUNT TAGS        (TAGS: comma-separated)
//   node client.js consume NAMESRV TOPIC GROUP EXPRESSION EXPECT
//
// ali-ons looks the name server up over HTTP unless `nameSrv` is given; the httpclient it
// insists on is one that refuses, so nothing leaves this machine.
const { Producer, Consumer, Message } = require('ali-ons');

const httpclient = {
  request() {
    throw new Error('mqlab interop: no HTTP name-server lookup (nameSrv is given)');
  },
};
const emit = obj => process.stdout.write(JSON.stringify(obj) + '\n');
const common = nameSrv => ({ httpclient, nameSrv, clientIP: '127.0.0.1', logger: silentLogger() });

function silentLogger() {
  const noop = () => {};
  return { info: noop, warn: noop, debug: noop, error: err => process.stderr.write(String(err && err.stack || err) + '\n') };
}

async function produce([ nameSrv, topic, group, count, tags ]) {
  const producer = new Producer({ ...common(nameSrv), producerGroup: group, instanceName: group });
  await producer.ready();
  const tagList = tags ? tags.split(',') : [ '' ];
  for (let i = 0; i < Number(count); i++) {
    const msg = new Message(topic, tagList[i % tagList.length], `node-${i}`);
    msg.keys = [ `key-${i}` ];
    try {
      const r = await producer.send(msg);
      emit({ event: 'send', i, status: r.sendStatus, queueId: r.messageQueue.queueId, queueOffset: r.queueOffset });
    } catch (err) {
      emit({ event: 'send', i, error: err.message });
    }
  }
  await producer.close();
}

async function consume([ nameSrv, topic, group, expression, expect ]) {
  const consumer = new Consumer({ ...common(nameSrv), consumerGroup: group, instanceName: group,
    consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET', rebalanceInterval: 1000 });
  let n = 0;
  let done;
  const finished = new Promise(resolve => { done = resolve; });
  consumer.subscribe(topic, expression, async msg => {
    emit({ event: 'consume', queueId: msg.queueId, queueOffset: Number(msg.queueOffset), tags: msg.tags,
      keys: msg.keys, body: msg.body.toString(), reconsumeTimes: msg.reconsumeTimes });
    if (++n >= Number(expect)) done();
  });
  consumer.on('error', err => process.stderr.write(String(err) + '\n'));
  await consumer.ready();
  const timer = setTimeout(done, 60000);
  await finished;
  clearTimeout(timer);
  await consumer.close();
  if (n < Number(expect)) {
    emit({ event: 'timeout', received: n });
    process.exit(3);
  }
}

const [ cmd, ...args ] = process.argv.slice(2);
const fn = { produce, consume }[cmd];
if (!fn) {
  process.stderr.write('usage: node client.js produce|consume ...\n');
  process.exit(2);
}
fn(args).then(() => process.exit(0), err => {
  emit({ event: 'error', error: String(err && err.message || err) });
  process.exit(1);
});
