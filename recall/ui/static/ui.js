// recall ui: search as you type, live sections (server-sent events), and the page's few writes.
// Every fragment is HTML the server rendered and escaped; this file never builds HTML from data.
//
// The session's key: the address `recall ui` printed answers with it (data-key, once); it is kept
// in this origin's storage (scheme, host and port: a page of another port cannot read it, though
// the browser sends it the cookie) and sent with every read and write (X-Recall-Key; the event
// stream's ?key=). A page navigated to with the cookie alone is a shell without data: it is read
// again here with the key and shown in its place before the page counts as loaded.
"use strict";
(function () {
  var KEY = "recall-ui-key";
  var root = document.documentElement;

  function stored() {
    try { return window.localStorage.getItem(KEY) || ""; } catch (err) { return ""; }
  }

  function say(text) {
    var main = document.querySelector("main") || document.body;
    var p = document.createElement("p");
    p.className = "problem";
    p.textContent = text;
    main.replaceChildren(p);
  }

  if (root.dataset.key !== undefined) {  // the one-time address's answer: keep the key, go on
    try {
      window.localStorage.setItem(KEY, root.dataset.key);
    } catch (err) {
      say("This browser keeps no storage for this page, and the page needs it for its key.");
      return;
    }
    location.replace(root.dataset.next || "/prompts");
    return;
  }
  var key = stored();
  if (root.dataset.shell === "elsewhere") {  // another site or local port sent the browser here
    say("Another site or another local port opened this page: it was not loaded by itself.");
    var go = document.createElement("a");
    go.href = location.href;
    go.textContent = "Open it";
    document.querySelector("main").appendChild(go);
    return;
  }
  if (root.dataset.shell !== undefined) {  // the page itself, read with the key (before the load event)
    if (!key) {
      say("This browser holds no key for this page: open the address `recall ui` printed " +
          "(run `recall ui` again for a new one).");
      return;
    }
    var xhr = new XMLHttpRequest();
    xhr.open("GET", location.pathname + location.search, false);
    xhr.setRequestHeader("X-Recall-Key", key);
    try { xhr.send(); } catch (err) { say("The page did not answer: is `recall ui` still serving it?"); return; }
    var doc = new DOMParser().parseFromString(xhr.responseText, "text/html");
    document.title = doc.title;
    var meta = doc.querySelector('meta[name="csrf-token"]');
    if (meta) document.head.appendChild(document.adoptNode(meta));
    document.body.replaceWith(document.adoptNode(doc.body));
    if (!meta) return;  // a refusal (the key is dead): shown as it is
  }
  var csrf = (document.querySelector('meta[name="csrf-token"]') || {}).content || "";

  function toast(text) {
    var t = document.getElementById("toast");
    if (!t) { t = document.createElement("div"); t.id = "toast"; document.body.appendChild(t); }
    t.textContent = text;
    t.hidden = false;
    clearTimeout(toast.timer);
    toast.timer = setTimeout(function () { t.hidden = true; }, 3000);
  }

  function post(path, data) {
    return fetch(path, {
      method: "POST", credentials: "same-origin",
      headers: {"X-CSRF-Token": csrf, "X-Recall-Key": key, "Content-Type": "application/x-www-form-urlencoded"},
      body: new URLSearchParams(data)
    }).then(function (r) {
      return r.json().catch(function () { return {ok: false, error: "refused (" + r.status + ")"}; });
    }).then(function (res) {
      if (!res.ok) { toast(res.error || "failed"); throw new Error(res.error || "failed"); }
      return res;
    });
  }

  // sections that refresh themselves from /fragment/... ------------------------------------------
  var busy = new Map();
  function refresh(section, url) {
    url = url || section.dataset.fragment;
    if (busy.get(section)) { busy.set(section, "again"); return; }
    busy.set(section, true);
    fetch(url, {credentials: "same-origin", headers: {"X-Recall-Key": key}}).then(function (r) { return r.text(); }).then(function (html) {
      section.innerHTML = html;
      section.dispatchEvent(new CustomEvent("refreshed", {bubbles: true}));
    }).catch(function () {}).finally(function () {
      var again = busy.get(section) === "again";
      busy.delete(section);
      if (again) refresh(section);
    });
  }

  // search as you type ----------------------------------------------------------------------------
  var form = document.getElementById("search");
  if (form) {
    var results = document.getElementById("results");
    var timer = null, settle = null, seq = 0, ctl = null, shown = null;
    // typing: each pause asks for the results as a prefix ("typing=1": its memories do not count
    // as used); a second later, the settled query once more, which counts them
    var run = function (typing) {
      var qs = new URLSearchParams(new FormData(form)).toString();
      history.replaceState(null, "", "/search?" + qs);
      var mine = ++seq;
      if (ctl) ctl.abort();
      ctl = new AbortController();
      clearTimeout(settle);
      if (typing) settle = setTimeout(function () { run(false); }, 1000);
      fetch("/fragment/search?" + qs + (typing ? "&typing=1" : ""),
            {credentials: "same-origin", headers: {"X-Recall-Key": key}, signal: ctl.signal})
        .then(function (r) { return r.text(); })
        .then(function (html) {
          if (mine === seq && html !== shown) {  // the settled query's answer is mostly the same: left as is
            shown = html;
            results.innerHTML = html;
            results.dataset.query = new FormData(form).get("q") || "";
            results.dispatchEvent(new CustomEvent("refreshed", {bubbles: true}));
          }
        }).catch(function () {});
    };
    form.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(function () { run(true); }, 60); });
    form.addEventListener("change", function (ev) {  // the filters; the box's own "change" (on blur) is no news
      if (ev.target.tagName === "SELECT") { clearTimeout(timer); run(false); }
    });
    form.addEventListener("submit", function (ev) { ev.preventDefault(); clearTimeout(timer); run(false); });
  }

  // live updates ----------------------------------------------------------------------------------
  if (window.EventSource) {
    var live = document.getElementById("live");
    var es = new EventSource("/events?key=" + encodeURIComponent(key));
    es.onopen = function () { if (live) live.classList.add("on"); };
    es.onerror = function () { if (live) live.classList.remove("on"); };
    ["prompts", "sessions", "status"].forEach(function (kind) {
      es.addEventListener(kind, function () {
        document.querySelectorAll('[data-live="' + kind + '"]').forEach(function (s) { refresh(s); });
      });
    });
  }
  document.querySelectorAll("[data-load]").forEach(function (s) { refresh(s); });

  // the writes ------------------------------------------------------------------------------------
  function memProject() {
    var m = document.getElementById("memories");
    return m ? m.dataset.project : "";
  }

  document.addEventListener("click", function (ev) {
    var b = ev.target.closest("button[data-action], button[data-copy]");
    if (!b) return;
    if (b.dataset.copy !== undefined) {
      var text = b.dataset.copy;
      (navigator.clipboard ? navigator.clipboard.writeText(text) : Promise.reject()).then(
        function () { toast("copied"); }, function () { toast(text); });
      return;
    }
    var a = b.dataset.action;
    if (a === "wrong") {
      post("/api/prompts/wrong", {t: b.dataset.t, session: b.dataset.session, wrong: b.dataset.wrong}).then(function () {
        toast(b.dataset.wrong === "1" ? "marked wrong" : "mark taken back");
        document.querySelectorAll('[data-live="prompts"]').forEach(function (s) { refresh(s); });
      });
    } else if (a === "forget-session") {
      if (!confirm("Forget session " + b.dataset.session.slice(0, 8) + " from every store (archive, index, " +
                   "memories, summaries, the injection log)? Claude Code's own transcript is left alone.")) return;
      post("/api/sessions/forget", {session: b.dataset.session}).then(function () {
        toast("forgotten");
        if (b.dataset.then) { location.href = b.dataset.then; } else { location.reload(); }
      });
    } else if (a === "mem-pin") {
      post("/api/memories/pin", {project: memProject(), id: b.dataset.id, pinned: b.dataset.pinned})
        .then(function () { location.reload(); });
    } else if (a === "mem-forget") {
      if (!confirm("Forget memory " + b.dataset.id + " for good?")) return;
      post("/api/memories/forget", {project: memProject(), id: b.dataset.id}).then(function () {
        var li = b.closest("li"); if (li) li.remove();
        toast("forgotten");
        location.reload();
      });
    } else if (a === "mem-edit-open") {
      var f = b.closest("li").querySelector("form.edit");
      f.hidden = !f.hidden;
      if (!f.hidden) f.querySelector("textarea").focus();
    }
  });

  document.addEventListener("submit", function (ev) {
    var f = ev.target;
    if (!f.classList.contains("edit")) return;
    ev.preventDefault();
    post("/api/memories/edit", {project: memProject(), id: f.dataset.id, content: f.querySelector("textarea").value})
      .then(function () { location.reload(); });
  });
})();
