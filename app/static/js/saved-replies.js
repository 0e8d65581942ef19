// Saved replies in the reply box of a thread (partials/threads/saved-replies.html): a typeahead
// instead of the select and its Insert button, which work without this file.
//
// "/" typed at the start of the message or after a space opens the list, and what follows the
// slash searches the titles; the "Saved replies" button opens it with a search field. Arrow keys
// move, Enter inserts the reply filled for this thread (fetched as plain text, put in as text:
// the customer's name is never markup), Escape closes. The conversation is swapped by htmx after
// a reply, so everything here is found from the event's target, never kept.
(function () {
  "use strict";

  var MAX_SHOWN = 8;

  function boxOf(element) { return element && element.closest ? element.closest(".reply-box") : null; }
  function parts(box) {
    return {
      box: box,
      message: box.querySelector("textarea[data-saved-replies]"),
      options: Array.prototype.slice.call(box.querySelectorAll("[data-saved-options] option[data-fill]")),
      picker: box.querySelector("[data-saved-picker]"),
      open: box.querySelector("[data-saved-open]"),
      panel: box.querySelector("[data-saved-panel]"),
      search: box.querySelector("[data-saved-search]"),
      list: box.querySelector("[data-saved-list]"),
      none: box.querySelector("[data-saved-none]")
    };
  }

  // Show the typeahead instead of the select in every reply box (again after each swap).
  function enhance(root) {
    (root.querySelectorAll ? root : document).querySelectorAll(".reply-box").forEach(function (box) {
      var insert = box.querySelector("[data-saved-insert]");
      var picker = box.querySelector("[data-saved-picker]");
      if (!insert || !picker) return;
      insert.hidden = true;
      picker.hidden = false;
    });
  }
  enhance(document);
  document.addEventListener("htmx:after:swap", function () { enhance(document); });

  // The "/" token before the caret in the message: its start and the query after it.
  function slashQuery(message) {
    var before = message.value.slice(0, message.selectionStart);
    var match = /(^|\s)\/([^\s/]{0,40})$/.exec(before);
    if (!match || message.selectionStart !== message.selectionEnd) return null;
    return { start: before.length - match[2].length - 1, query: match[2] };
  }

  function render(p, query) {
    var needle = query.toLowerCase();
    var found = p.options.filter(function (option) {
      return option.textContent.toLowerCase().indexOf(needle) !== -1;
    }).slice(0, MAX_SHOWN);
    p.list.replaceChildren();
    found.forEach(function (option, index) {
      var item = document.createElement("li");
      item.id = "saved-option-" + option.value;
      item.className = "saved-picker__item";
      item.setAttribute("role", "option");
      item.setAttribute("aria-selected", index === 0 ? "true" : "false");
      item.dataset.fill = option.dataset.fill;
      item.textContent = option.textContent;
      p.list.appendChild(item);
    });
    p.none.hidden = found.length > 0;
    mark(p, found.length ? 0 : -1);
    return found.length;
  }

  function items(p) { return Array.prototype.slice.call(p.list.querySelectorAll("[role=option]")); }
  function current(p) { return items(p).findIndex(function (el) { return el.getAttribute("aria-selected") === "true"; }); }
  function mark(p, index) {
    var all = items(p);
    all.forEach(function (el, i) { el.setAttribute("aria-selected", i === index ? "true" : "false"); });
    var chosen = all[index];
    var owner = p.box.dataset.savedMode === "search" ? p.search : p.message;
    if (chosen) { owner.setAttribute("aria-activedescendant", chosen.id); chosen.scrollIntoView({ block: "nearest" }); }
    else owner.removeAttribute("aria-activedescendant");
  }

  function openPicker(p, mode, query) {
    p.box.dataset.savedMode = mode;
    p.panel.hidden = false;
    p.open.setAttribute("aria-expanded", "true");
    p.search.setAttribute("aria-expanded", "true");
    p.search.hidden = mode !== "search";
    if (mode === "search") { p.search.value = query; p.search.focus(); }
    render(p, query);
  }

  function closePicker(p, refocus) {
    delete p.box.dataset.savedMode;
    p.panel.hidden = true;
    p.open.setAttribute("aria-expanded", "false");
    p.search.setAttribute("aria-expanded", "false");
    p.message.removeAttribute("aria-activedescendant");
    if (refocus) p.message.focus();
  }

  // Put the filled text into the message: in place of "/query", or at the caret.
  function insert(p, item) {
    var slash = p.box.dataset.savedMode === "slash" ? slashQuery(p.message) : null;
    var start = slash ? slash.start : p.message.selectionStart;
    var end = p.message.selectionEnd;
    closePicker(p, true);
    fetch(item.dataset.fill, { credentials: "same-origin", headers: { "Accept": "text/plain" } })
      .then(function (response) {
        var type = response.headers.get("Content-Type") || "";
        if (!response.ok || type.indexOf("text/plain") !== 0) throw new Error("saved reply not available");
        return response.text();
      })
      .then(function (text) {
        p.message.focus();
        p.message.setRangeText(text, start, end, "end");
        p.message.dispatchEvent(new Event("input", { bubbles: true }));
      })
      .catch(function () { p.box.querySelector("[data-saved-insert]").hidden = false; });
  }

  function handleKeys(p, event) {
    if (!p.box.dataset.savedMode) return;
    var index = current(p);
    var count = items(p).length;
    if (event.key === "ArrowDown" && count) { event.preventDefault(); mark(p, (index + 1) % count); }
    else if (event.key === "ArrowUp" && count) { event.preventDefault(); mark(p, (index - 1 + count) % count); }
    else if (event.key === "Enter" && index >= 0) { event.preventDefault(); insert(p, items(p)[index]); }
    else if (event.key === "Enter" && event.target === p.search) event.preventDefault(); // never submits the reply
    else if (event.key === "Escape") { event.preventDefault(); closePicker(p, true); }
  }

  document.addEventListener("input", function (event) {
    var target = event.target;
    var box = boxOf(target);
    if (!box || !box.querySelector("[data-saved-picker]") || box.querySelector("[data-saved-picker]").hidden) return;
    var p = parts(box);
    if (target === p.search) { render(p, p.search.value); return; }
    if (target !== p.message) return;
    var slash = slashQuery(p.message);
    if (slash) openPicker(p, "slash", slash.query);
    else if (box.dataset.savedMode === "slash") closePicker(p, false);
  });

  document.addEventListener("keydown", function (event) {
    var box = boxOf(event.target);
    if (!box || !box.dataset.savedMode) return;
    var p = parts(box);
    if (event.target === p.message || event.target === p.search) handleKeys(p, event);
  });

  document.addEventListener("click", function (event) {
    var open = event.target.closest("[data-saved-open]");
    if (open) {
      var p = parts(boxOf(open));
      if (p.box.dataset.savedMode) closePicker(p, true); else openPicker(p, "search", "");
      return;
    }
    var item = event.target.closest(".saved-picker__item");
    if (item) { insert(parts(boxOf(item)), item); return; }
    document.querySelectorAll(".reply-box[data-saved-mode]").forEach(function (box) {
      if (!box.querySelector("[data-saved-picker]").contains(event.target) && event.target !== box.querySelector("textarea")) {
        closePicker(parts(box), false);
      }
    });
  });
})();
