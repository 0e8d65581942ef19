/* Widget demo page of the agent app: uses the widget's JavaScript API, as a customer's site would. */
(function () {
  "use strict";
  window.Earful = window.Earful || function () { (window.Earful.q = window.Earful.q || []).push(arguments); };
  var identity = document.getElementById("demo-identity");
  if (identity) {
    window.Earful("identify", {
      email: identity.dataset.email,
      name: identity.dataset.name,
      properties: { source: "Earful widget demo" },
      tags: ["demo"]
    });
  }
  document.querySelectorAll("[data-earful-open]").forEach(function (button) {
    button.addEventListener("click", function () { window.Earful("open"); });
  });
})();
