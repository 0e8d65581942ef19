// Live inbox and thread pages. htmx's SSE extension keeps the page's stream open
// (app/views/live.py) and turns its events into DOM events; they carry ids only, and this file
// asks the ordinary views for the rows they name:
//
// - earful:threads "12 13": the inbox asks for its filter's threads newer than those it shows
//   (views.inbox.newer_threads) and puts each row it does not have yet in its place;
// - earful:reply "45": the thread page asks for the replies newer than those it shows
//   (views.threads.newer_replies) and adds those it does not have yet;
// - earful:typing: the thread page asks who is writing (views.live.typing_line), and again once
//   that may have ended;
// - earful:ready (every connect and reconnect) and earful:catch-up (events were dropped): the
//   page asks for whatever is newer than what it shows, so nothing is missed and nothing shown
//   twice (rows are matched by id).
//
// The reply box pings the thread's stream while its agent types (at most every PING_MS).
// Pages work without this file: they show what a reload shows.
(function () {
  "use strict";

  var PING_MS = 3000;
  var TYPING_MS = 6500; // the server forgets a ping after 6 s

  function csrfToken() {
    try { return JSON.parse(document.body.getAttribute("hx-headers:inherited") || "{}")["X-CSRF-Token"] || ""; }
    catch (error) { return ""; }
  }

  function withQuery(url, name, value) {
    return url + (url.indexOf("?") === -1 ? "?" : "&") + name + "=" + encodeURIComponent(value);
  }

  // One request at a time per page: two events in a row must not insert the same row twice.
  var queue = Promise.resolve();
  function fetchFragment(url) {
    var done = queue.then(function () {
      return fetch(url, { credentials: "same-origin", headers: { "HX-Request": "true" } }).then(function (response) {
        var type = response.headers.get("Content-Type") || "";
        if (!response.ok || type.indexOf("text/html") !== 0) throw new Error("live fragment refused: " + response.status);
        return response.text();
      });
    });
    queue = done.catch(function () {});
    return done;
  }

  function parse(html) {
    var template = document.createElement("template");
    template.innerHTML = html;
    return template.content;
  }

  function idsOf(data) {
    return String(data || "").split(/\s+/).map(Number).filter(function (id) { return id > 0; });
  }

  function process(element) {
    if (window.htmx && typeof window.htmx.process === "function") window.htmx.process(element);
  }

  // --- the inbox -----------------------------------------------------------------------------

  function inboxResults() {
    var results = document.getElementById("inbox-results");
    return results && results.hasAttribute("data-live-newer") ? results : null;
  }

  // Rows and replies carry their id as id="thread-12" and id="reply-45".
  function idOf(element, prefix) { return Number(element.id.slice(prefix.length)); }
  var THREAD_ROWS = "li.thread-row[id^='thread-']";
  var REPLIES = "li.reply[id^='reply-']";

  function shownThreadIds(results) {
    return Array.prototype.map.call(results.querySelectorAll(THREAD_ROWS), function (row) { return idOf(row, "thread-"); });
  }

  function addThreadRows(results, html) {
    var list = results.querySelector(".thread-list");
    parse(html).querySelectorAll(THREAD_ROWS).forEach(function (row) {
      var id = idOf(row, "thread-");
      if (document.getElementById("thread-" + id)) return;
      var before = Array.prototype.find.call(list.querySelectorAll(THREAD_ROWS), function (other) {
        return idOf(other, "thread-") < id;
      });
      row.classList.add("is-new");
      list.insertBefore(row, before || null);
      process(row);
    });
  }

  function refreshInbox(results) {
    // An inbox that shows no thread has no list to add to: it takes the whole results again.
    if (window.htmx) window.htmx.ajax("GET", results.getAttribute("data-live-results"), { target: "#inbox-results", swap: "outerHTML" });
  }

  function catchUpInbox(announced) {
    var results = inboxResults();
    if (!results) return;
    if (!results.querySelector(".thread-list")) { if (announced === null || announced.length) refreshInbox(results); return; }
    var shown = shownThreadIds(results);
    var newest = shown.length ? Math.max.apply(null, shown) : 0;
    var missing = (announced || []).filter(function (id) { return shown.indexOf(id) === -1; });
    if (announced !== null && !missing.length) return;
    // Ask from the oldest thread announced (ids may commit out of order across processes).
    var after = missing.length ? Math.min(newest, Math.min.apply(null, missing) - 1) : newest;
    fetchFragment(withQuery(results.getAttribute("data-live-newer"), "after", after))
      .then(function (html) { var now = inboxResults(); if (now && now.querySelector(".thread-list")) addThreadRows(now, html); })
      .catch(function () {});
  }

  // --- the thread page -----------------------------------------------------------------------

  function threadSource() { return document.querySelector("[data-live=thread]"); }

  function shownReplyIds() {
    return Array.prototype.map.call(document.querySelectorAll("#conversation " + REPLIES), function (reply) {
      return idOf(reply, "reply-");
    });
  }

  function repliesList() {
    var conversation = document.getElementById("conversation");
    if (!conversation) return null;
    var list = conversation.querySelector("[data-live-replies]");
    if (!list) {
      list = document.createElement("ol");
      list.className = "replies";
      list.setAttribute("data-live-replies", "");
      var empty = conversation.querySelector("[data-live-empty]");
      var before = empty || conversation.querySelector("[data-typing-line]") || conversation.querySelector(".reply-box");
      conversation.insertBefore(list, before);
    }
    return list;
  }

  function addReplies(html) {
    var list = repliesList();
    if (!list) return;
    var added = 0;
    parse(html).querySelectorAll(REPLIES).forEach(function (reply) {
      var id = idOf(reply, "reply-");
      if (document.getElementById("reply-" + id)) return;
      var after = Array.prototype.find.call(list.querySelectorAll(REPLIES), function (other) {
        return idOf(other, "reply-") > id;
      });
      reply.classList.add("is-new");
      list.insertBefore(reply, after || null);
      process(reply);
      added += 1;
    });
    if (!added) return;
    var empty = document.querySelector("#conversation [data-live-empty]");
    if (empty) empty.remove();
    var count = document.querySelector("#conversation [data-live-count]");
    if (count) count.textContent = String(document.querySelectorAll("#conversation " + REPLIES).length);
  }

  function catchUpReplies(announced) {
    var source = threadSource();
    if (!source) return;
    var shown = shownReplyIds();
    var newest = shown.length ? Math.max.apply(null, shown) : 0;
    var missing = (announced || []).filter(function (id) { return shown.indexOf(id) === -1; });
    if (announced !== null && !missing.length) return;
    var after = missing.length ? Math.min(newest, Math.min.apply(null, missing) - 1) : newest;
    fetchFragment(withQuery(source.getAttribute("data-live-replies-url"), "after", after))
      .then(addReplies)
      .catch(function () {});
  }

  var typingTimer = null;
  function refreshTyping() {
    var source = threadSource();
    if (!source) return;
    fetchFragment(source.getAttribute("data-live-typing-line-url")).then(function (html) {
      var line = document.getElementById("typing-line");
      var fresh = parse(html).querySelector("[data-typing-line]");
      if (!line || !fresh) return;
      line.textContent = fresh.textContent;
      clearTimeout(typingTimer);
      if (fresh.textContent.trim()) typingTimer = setTimeout(refreshTyping, TYPING_MS);
    }).catch(function () {});
  }

  var lastPing = 0;
  document.addEventListener("input", function (event) {
    var source = threadSource();
    if (!source || !event.target.matches(".reply-box textarea[name=message]")) return;
    var now = Date.now();
    if (now - lastPing < PING_MS || !event.target.value.trim()) return;
    lastPing = now;
    fetch(source.getAttribute("data-live-typing-url"), {
      method: "POST",
      credentials: "same-origin",
      headers: { "X-CSRF-Token": csrfToken(), "HX-Request": "true" }
    }).catch(function () {});
  });

  // --- the stream and its events ------------------------------------------------------------

  // The page names its stream in data-live-connect; it becomes hx-sse:connect here, once the SSE
  // extension is registered. htmx starts on a timer when its deferred script runs, which may be
  // before the extension's script has run (when that one is still downloading): an element
  // processed then would never connect. This timer runs after htmx's, so htmx has started either
  // way, and processing the element once more connects it exactly once.
  setTimeout(function () {
    document.querySelectorAll("[data-live-connect]").forEach(function (source) {
      if (source.hasAttribute("hx-sse:connect") || !window.htmx) return;
      source.setAttribute("hx-sse:connect", source.getAttribute("data-live-connect"));
      window.htmx.process(source);
    });
  });

  document.addEventListener("earful:threads", function (event) { catchUpInbox(idsOf(event.detail && event.detail.data)); });
  document.addEventListener("earful:reply", function (event) {
    catchUpReplies(idsOf(event.detail && event.detail.data));
    refreshTyping(); // whoever replied has stopped writing
  });
  document.addEventListener("earful:typing", refreshTyping);
  function catchUp() { catchUpInbox(null); catchUpReplies(null); if (threadSource()) refreshTyping(); }
  document.addEventListener("earful:ready", catchUp);
  document.addEventListener("earful:catch-up", catchUp);
})();
