// Preloaded into the test servers (NODE_OPTIONS=--require): a server that listens on a port
// without naming a host would listen on every interface; tests keep it on 127.0.0.1.
// Naming a host makes Node look it up first (asynchronously, even an address), so `address()` right
// after `listen(0)` would be null; servers that read their port at once (the conformance suite's
// auth servers do) need the bind to happen in the call, as it does without a host: the lookup of
// 127.0.0.1 answers in the call.
const dns = require("node:dns");
const net = require("node:net");
const listen = net.Server.prototype.listen;
const LOOPBACK = "127.0.0.1";

function answerLoopbackAtOnce(lookup) {
  return function (hostname, options, callback) {
    const done = typeof options === "function" ? options : callback;
    if (hostname !== LOOPBACK || typeof done !== "function") return lookup.apply(this, arguments);
    if (options && typeof options === "object" && options.all) done(null, [{ address: LOOPBACK, family: 4 }]);
    else done(null, LOOPBACK, 4);
    return {};
  };
}

net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" || (typeof args[0] === "string" && /^\d+$/.test(args[0]))) {
    if (args.length === 1 || typeof args[1] === "function") {
      args.splice(1, 0, LOOPBACK);
    }
  } else if (args[0] && typeof args[0] === "object" && args[0].port !== undefined && !args[0].host) {
    args[0] = { ...args[0], host: LOOPBACK };
  }
  const lookup = dns.lookup;
  dns.lookup = answerLoopbackAtOnce(lookup);
  try {
    return listen.apply(this, args);
  } finally {
    dns.lookup = lookup;
  }
};
