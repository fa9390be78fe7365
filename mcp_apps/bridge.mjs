// The host side of an MCP App view in the page: a sandboxed frame and the official AppBridge
// (@modelcontextprotocol/ext-apps) speaking the extension's JSON-RPC with it over postMessage.
// Every request the view makes goes to Python as a component state value and comes back as an
// answer in the component's data, so it runs on the page's own MCP session. Bundled by esbuild
// (scripts/setup_mcp_apps.sh) into the module ui/app_view.py registers.
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

// A view may send this many messages in FLOOD_WINDOW_MS; past it the host stops listening.
const FLOOD_LIMIT = 200;
const FLOOD_WINDOW_MS = 10000;
const SIZE_WAIT_MS = 5000;
// A view loaded ahead starts telling the page once its result is posted, or this long after its input.
const TELL_AFTER_INPUT_MS = 1000;
const SIZE_WORDS = "The view has not reported its size, so it is shown at a fixed height.";
const views = new WeakMap();

class View {
  constructor(root, data, setStateValue) {
    this.id = data.id;
    // Request ids carry this instance's own tag: a view mounted again under the same key starts its
    // count anew, and must not be handed the answers its predecessor was given.
    this.tag = Math.random().toString(36).slice(2, 10);
    this.setStateValue = setStateValue;
    this.pending = new Map();
    this.requests = [];
    this.answered = new Set();
    this.seq = 0;
    this.calls = 0;
    this.sized = false;
    this.flooded = false;
    this.sent = [];
    this.blocked = new Set();
    this.maxHeight = data.maxHeight;
    // A view may be mounted before its call (when its tool is chosen) or while it runs: the input is
    // posted when the call is made and the result when it comes, each once, in that order.
    this.initialized = false;
    this.toolInput = data.toolInput || null;
    this.toolResult = data.toolResult || null;
    this.inputSent = false;
    this.resultSent = false;
    // Each state value reruns the page's script, and a rerun that starts while the person's Call is
    // being run drops that click; so a view loaded ahead tells the page nothing until its call is made,
    // and then not before its result is posted (or a second has passed), so the rerun it causes, with
    // the view's whole document in its data, does not queue ahead of the run carrying the result.
    this.telling = Boolean(data.toolInput);
    this.untold = new Map();

    this.box = document.createElement("div");
    this.box.className = data.border ? "yiem-view yiem-view-border" : "yiem-view";
    this.frame = document.createElement("iframe");
    // No allow-same-origin: the view gets an opaque origin, so it reaches neither the app's
    // cookies nor its storage nor this page; no popups or top navigation either.
    this.frame.setAttribute("sandbox", "allow-scripts allow-forms");
    this.frame.setAttribute("allow", data.allow);
    this.frame.setAttribute("csp", data.csp);
    this.frame.setAttribute("referrerpolicy", "no-referrer");
    this.frame.title = data.title;
    this.frame.style.height = `${data.initialHeight}px`;
    this.note = document.createElement("p");
    this.note.className = "yiem-view-note";
    this.note.setAttribute("role", "status");
    this.box.append(this.frame, this.note);
    root.append(this.box);

    this.onWindowMessage = (event) => this.screen(event);
    // Registered before the transport's listener, so a flood or a host note never reaches it.
    window.addEventListener("message", this.onWindowMessage, true);
    this.frame.srcdoc = data.html;
    this.bridge = this.makeBridge(data);
    this.bridge.connect(new PostMessageTransport(this.frame.contentWindow, this.frame.contentWindow));
    // Chromium runs no animation frames in a cross-origin frame that is off screen, and views measure
    // themselves in one: the wait for a size report starts once the frame is first on screen.
    this.onScreen = new IntersectionObserver((entries) => {
      if (!entries.some((entry) => entry.isIntersecting)) return;
      this.onScreen.disconnect();
      this.sizeTimer = setTimeout(() => {
        if (!this.sized) this.say(SIZE_WORDS);
      }, SIZE_WAIT_MS);
    });
    this.onScreen.observe(this.frame);
  }

  makeBridge(data) {
    const bridge = new AppBridge(
      null,
      { name: "yiem", version: data.hostVersion },
      { openLinks: {}, serverTools: {}, serverResources: {}, logging: {}, message: { text: {} } },
      {
        hostContext: {
          theme: data.theme,
          displayMode: "inline",
          availableDisplayModes: ["inline"],
          platform: "web",
          locale: navigator.language,
          timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
          containerDimensions: { maxHeight: data.maxHeight },
          toolInfo: data.toolInfo || undefined,
        },
      },
    );
    bridge.oncalltool = (params) => this.ask("tools/call", params);
    bridge.onreadresource = (params) => this.ask("resources/read", params);
    bridge.onmessage = (params) => this.ask("ui/message", params);
    bridge.onopenlink = (params) => this.ask("ui/open-link", params);
    bridge.onloggingmessage = (params) => this.ask("notifications/message", params, false);
    bridge.onsizechange = ({ height }) => {
      this.sized = true;
      if (this.note.textContent === SIZE_WORDS) this.say("");  // a late report: the note no longer holds
      if (typeof height === "number" && height > 0) {
        this.frame.style.height = `${Math.min(Math.ceil(height), this.maxHeight)}px`;
      }
    };
    bridge.oninitialized = () => {
      this.initialized = true;
      this.sendCall();
      this.tell("initialized", true);
    };
    return bridge;
  }

  // Counts the view's messages and takes the host's own notes out of the stream.
  screen(event) {
    if (event.source !== this.frame.contentWindow) return;
    if (this.flooded) {
      event.stopImmediatePropagation();
      return;
    }
    const now = Date.now();
    this.sent = this.sent.filter((at) => now - at < FLOOD_WINDOW_MS);
    this.sent.push(now);
    if (this.sent.length > FLOOD_LIMIT) {
      this.flooded = true;
      event.stopImmediatePropagation();
      this.say(`The view sent more than ${FLOOD_LIMIT} messages in ${FLOOD_WINDOW_MS / 1000} s, so yiem stopped listening to it.`);
      this.tell("flooded", true);
      return;
    }
    const message = event.data;
    if (message && message.yiemHost === "blocked") {
      event.stopImmediatePropagation();
      // The frame's csp attribute and its own meta policy each report the same attempt.
      this.blocked.add(String(message.what));
      this.tell("blocked", [...this.blocked].slice(-20));
    }
  }

  ask(method, params, answered = true) {
    const id = `${this.id}:${this.tag}:${++this.seq}`;
    this.requests = [...this.requests, { id, method, params }].slice(-50);
    this.tell("requests", this.requests);
    if (!answered) return undefined;
    return new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
  }

  tell(name, value) {
    if (this.telling) this.setStateValue(name, value);
    else this.untold.set(name, value);
  }

  startTelling() {
    clearTimeout(this.tellTimer);
    if (this.telling) return;
    this.telling = true;
    for (const [name, value] of this.untold) this.setStateValue(name, value);
    this.untold.clear();
  }

  sendCall() {
    if (!this.initialized) return;
    if (this.toolInput && !this.inputSent) {
      this.inputSent = true;
      this.bridge.sendToolInput({ arguments: this.toolInput });
    }
    if (this.toolResult && !this.resultSent) {
      this.resultSent = true;
      this.bridge.sendToolResult(this.toolResult);
      this.startTelling();
    }
  }

  update(data) {
    this.maxHeight = data.maxHeight;
    if (data.toolInput && !this.toolInput) {
      this.toolInput = data.toolInput;
      this.tellTimer = setTimeout(() => this.startTelling(), TELL_AFTER_INPUT_MS);
    }
    if (data.toolResult && !this.toolResult) this.toolResult = data.toolResult;
    this.sendCall();
    for (const [id, answer] of Object.entries(data.answers || {})) {
      const waiting = this.pending.get(id);
      if (!waiting || this.answered.has(id)) continue;
      this.answered.add(id);
      this.pending.delete(id);
      if (answer.error) waiting.reject(new Error(answer.error));
      else waiting.resolve(answer.result);
    }
    if (data.theme !== this.theme) {
      if (this.theme !== undefined) this.bridge.sendHostContextChange({ theme: data.theme });
      this.theme = data.theme;
    }
  }

  say(words) {
    this.note.textContent = words;
  }

  destroy() {
    clearTimeout(this.sizeTimer);
    clearTimeout(this.tellTimer);
    this.onScreen.disconnect();
    window.removeEventListener("message", this.onWindowMessage, true);
    this.bridge.close().catch(() => {});
    this.box.remove();
  }
}

export default function (component) {
  const { parentElement, data, setStateValue } = component;
  let view = views.get(parentElement);
  if (!view || view.id !== data.id) {
    if (view) view.destroy();
    view = new View(parentElement, data, setStateValue);
    views.set(parentElement, view);
  }
  view.update(data);
  const call = ++view.calls;
  // Streamlit runs the cleanup of a data update that a newer one overtook while this module loaded,
  // after the newer update has taken the same view: only the latest call's cleanup may end it (ci47).
  return () => {
    if (views.get(parentElement) !== view || view.calls !== call) return;
    view.destroy();
    views.delete(parentElement);
  };
}
