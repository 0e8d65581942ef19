// Earful web app: small progressive enhancements. Every page works without this file.
(function () {
  "use strict";

  // Copy buttons: <button data-copy="#element-id">Copy</button>
  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-copy]");
    if (!button) return;
    var source = document.querySelector(button.getAttribute("data-copy"));
    if (!source) return;
    var text = "value" in source ? source.value : source.textContent;
    navigator.clipboard.writeText(text.trim()).then(function () {
      var label = button.textContent;
      button.textContent = "Copied";
      setTimeout(function () { button.textContent = label; }, 1500);
    });
  });

  // Tag pickers: a matching tag picked from the list fills the field and submits its form
  // (the inbox's filter, a thread's add tag form), as typing the name and pressing Enter would.
  document.addEventListener("click", function (event) {
    var pick = event.target.closest("[data-tag-pick]");
    if (!pick) return;
    var picker = pick.closest("[data-tag-picker]");
    var field = picker && picker.querySelector("input");
    if (!field || !field.form) return;
    field.value = pick.getAttribute("data-tag-pick");
    picker.querySelector(".tag-matches").replaceChildren();
    field.form.requestSubmit();
  });

  // Charts wider than a phone's screen scroll sideways; start them at their latest day.
  document.querySelectorAll("[data-scroll-end]").forEach(function (el) { el.scrollLeft = el.scrollWidth; });

  // The inbox's selection (a form marked data-selection around the list): shift-click ticks a
  // range, the bar counts the ticked threads and, once the whole page is ticked, offers "select
  // all N matching" (a checkbox that works without this file too). The list is swapped by htmx
  // when the filters change, so everything is looked up at the time of the event.
  var lastTicked = null;
  function selectionForm() { return document.querySelector("[data-selection]"); }
  function boxes(form) { return Array.prototype.slice.call(form.querySelectorAll("[data-select]")); }
  function updateSelection() {
    var form = selectionForm();
    if (!form) return;
    var all = boxes(form);
    var ticked = all.filter(function (box) { return box.checked; }).length;
    var offer = form.querySelector("[data-selection-matching]");
    var matching = offer ? offer.querySelector("input") : null;
    if (offer) {
      offer.hidden = ticked < all.length && !(matching && matching.checked);
      if (matching && ticked < all.length) matching.checked = false;
    }
    var count = form.querySelector("[data-selection-count]");
    if (count) {
      if (matching && matching.checked) count.textContent = "Every thread matching is selected.";
      else if (ticked) count.textContent = ticked + (ticked === 1 ? " thread" : " threads") + " selected.";
      else count.textContent = "Tick threads to act on several at once (x ticks the highlighted one).";
    }
  }
  document.addEventListener("click", function (event) {
    var box = event.target.closest("[data-select]");
    if (!box) return;
    var form = selectionForm();
    var all = form ? boxes(form) : [];
    var index = all.indexOf(box);
    if (event.shiftKey && lastTicked !== null && index >= 0 && lastTicked < all.length) {
      var from = Math.min(lastTicked, index), to = Math.max(lastTicked, index);
      for (var i = from; i <= to; i++) all[i].checked = box.checked;
    }
    lastTicked = index;
  });
  document.addEventListener("change", function (event) {
    if (!event.target.closest("[data-selection]")) return;
    var matching = event.target.closest("[data-selection-matching]");
    if (matching && event.target.checked) {
      boxes(selectionForm()).forEach(function (box) { box.checked = true; });
    }
    updateSelection();
  });
  document.addEventListener("htmx:after:swap", function () { lastTicked = null; updateSelection(); });
  updateSelection();

  // The a and i keys' picker of the inbox (a dialog whose form assigns one thread).
  function assignFocused(thread, toMe) {
    var dialog = document.querySelector("[data-assign-dialog]");
    if (!dialog || !thread) return;
    dialog.querySelector("[data-assign-thread]").value = thread.getAttribute("data-thread-id");
    var choice = dialog.querySelector("[data-assign-choice]");
    if (toMe) {
      choice.value = choice.getAttribute("data-me");
      dialog.querySelector("form").requestSubmit();
      return;
    }
    dialog.showModal();
    choice.focus();
  }
  document.addEventListener("click", function (event) {
    var close = event.target.closest("[data-dialog-close]");
    if (close) close.closest("dialog").close();
  });

  // Keyboard: "/" focuses the search box; j/k move through a list marked data-keyboard-list;
  // Enter or o opens the selected item; x ticks it; a assigns it (a picker), i assigns it to the
  // agent. On a thread's page a focuses its assignee picker and i assigns it to the agent.
  function items() {
    var list = document.querySelector("[data-keyboard-list]");
    return list ? Array.prototype.slice.call(list.querySelectorAll("[data-keyboard-item]")) : [];
  }
  function select(all, index) {
    all.forEach(function (el) { el.classList.remove("is-selected"); });
    var el = all[index];
    if (el) { el.classList.add("is-selected"); el.scrollIntoView({ block: "nearest" }); var link = el.querySelector("a"); if (link) link.focus(); }
  }
  function typing(target) {
    var tag = (target.tagName || "").toLowerCase();
    if (tag === "textarea" || tag === "select" || target.isContentEditable) return true;
    return tag === "input" && target.type !== "checkbox" && target.type !== "radio";
  }
  document.addEventListener("keydown", function (event) {
    if (typing(event.target) || event.metaKey || event.ctrlKey || event.altKey) return;
    if (document.querySelector("dialog[open]")) return;
    var all = items();
    var current = all.findIndex(function (el) { return el.classList.contains("is-selected"); });
    var focused = current >= 0 ? all[current] : null;
    if (event.key === "/") {
      var search = document.querySelector("[data-search]");
      if (search) { event.preventDefault(); search.focus(); }
    } else if (event.key === "j" && all.length) {
      select(all, Math.min(current + 1, all.length - 1));
    } else if (event.key === "k" && all.length) {
      select(all, Math.max(current - 1, 0));
    } else if ((event.key === "o" || event.key === "Enter") && focused) {
      var link = focused.querySelector("a");
      if (link) { event.preventDefault(); link.click(); }
    } else if (event.key === "x" && focused) {
      var box = focused.querySelector("[data-select]");
      if (box) { box.checked = !box.checked; box.dispatchEvent(new Event("change", { bubbles: true })); }
    } else if (event.key === "a" || event.key === "i") {
      var picker = document.querySelector("[data-assign-picker]");
      if (picker) {  // a thread's page
        event.preventDefault();
        if (event.key === "a") picker.focus();
        else { var me = document.querySelector("[data-assign-me]"); if (me) me.click(); }
      } else if (focused) {
        event.preventDefault();
        assignFocused(focused, event.key === "i");
      }
    }
  });
})();
