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

  // Keyboard: "/" focuses the search box; j/k move through a list marked data-keyboard-list;
  // Enter or o opens the selected item.
  function items() {
    var list = document.querySelector("[data-keyboard-list]");
    return list ? Array.prototype.slice.call(list.querySelectorAll("[data-keyboard-item]")) : [];
  }
  function select(all, index) {
    all.forEach(function (el) { el.classList.remove("is-selected"); });
    var el = all[index];
    if (el) { el.classList.add("is-selected"); el.scrollIntoView({ block: "nearest" }); var link = el.querySelector("a"); if (link) link.focus(); }
  }
  document.addEventListener("keydown", function (event) {
    var tag = (event.target.tagName || "").toLowerCase();
    if (tag === "input" || tag === "textarea" || tag === "select" || event.metaKey || event.ctrlKey || event.altKey) return;
    var all = items();
    var current = all.findIndex(function (el) { return el.classList.contains("is-selected"); });
    if (event.key === "/") {
      var search = document.querySelector("[data-search]");
      if (search) { event.preventDefault(); search.focus(); }
    } else if (event.key === "j" && all.length) {
      select(all, Math.min(current + 1, all.length - 1));
    } else if (event.key === "k" && all.length) {
      select(all, Math.max(current - 1, 0));
    } else if ((event.key === "o" || event.key === "Enter") && current >= 0) {
      var link = all[current].querySelector("a");
      if (link) { event.preventDefault(); link.click(); }
    }
  });
})();
