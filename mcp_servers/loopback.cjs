// Preloaded into the test servers (NODE_OPTIONS=--require): a server that listens on a port
// without naming a host would listen on every interface; tests keep it on 127.0.0.1.
// A numeric port is bound at once on a 127.0.0.1 handle, so `address()` right after `listen()`
// names the port, as it does without a host (naming the host would make the bind wait on a lookup).
const net = require("node:net");
const listen = net.Server.prototype.listen;
let tcpWrap = null;
try {
  tcpWrap = process.binding("tcp_wrap");
} catch {
  tcpWrap = null;
}

function boundHandle(port) {
  if (tcpWrap === null) return null;
  const handle = new tcpWrap.TCP(tcpWrap.constants.SERVER);
  return handle.bind("127.0.0.1", port) === 0 ? handle : null;
}

net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" || (typeof args[0] === "string" && /^\d+$/.test(args[0]))) {
    if (args.length === 1 || typeof args[1] === "function") {
      const handle = boundHandle(Number(args[0]));
      if (handle !== null) {
        return listen.apply(this, args.length === 1 ? [handle] : [handle, args[1]]);
      }
      args.splice(1, 0, "127.0.0.1");
    }
  } else if (args[0] && typeof args[0] === "object" && args[0].port !== undefined && !args[0].host) {
    args[0] = { ...args[0], host: "127.0.0.1" };
  }
  return listen.apply(this, args);
};
