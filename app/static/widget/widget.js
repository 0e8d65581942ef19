/*! Earful feedback widget. Hand-written, no dependencies, no build step.
 * <script src="BASE/widget.js" data-app="ID" data-key="KEY" async></script>
 * JS API: window.Earful = window.Earful || function(){(Earful.q=Earful.q||[]).push(arguments)};
 *         Earful('identify', {email, name, properties, tags}); Earful('open'); Earful('close');
 * CSP-friendly: no eval, no inline scripts, no style attributes; styles are a constructable
 * stylesheet adopted by the shadow root. */
(function () {
  "use strict";
  var w = window, d = document;
  if (w.Earful && w.Earful.loaded) return;
  var script = d.currentScript || d.querySelector('script[data-app][src*="widget.js"]');
  if (!script) return;
  var data = script.dataset;
  var base = script.src.replace(/\/widget\.js([?#].*)?$/, "");
  var app = data.app, key = data.key || "";
  if (!/^\d+$/.test(app || "")) return;

  var T = {
    en: {
      button: "Feedback", title: "Send feedback", close: "Close",
      message: "Message", messageHint: "What would you like to tell us?",
      email: "E-mail", emailHint: "you@example.com", name: "Name", nameHint: "Optional",
      mood: "How do you feel?", moods: ["Unhappy", "Neutral", "Happy"],
      nps: "How likely are you to recommend us to a friend or colleague?", npsLow: "Not likely", npsHigh: "Very likely",
      files: "Attach files", remove: "Remove", send: "Send", sending: "Sending…", more: "Send more feedback",
      network: "We could not reach the server. Check your connection and try again.",
      failed: "Something went wrong. Please try again."
    },
    es: {
      button: "Opinión", title: "Envíanos tu opinión", close: "Cerrar",
      message: "Mensaje", messageHint: "¿Qué quieres contarnos?",
      email: "Correo electrónico", emailHint: "tu@ejemplo.com", name: "Nombre", nameHint: "Opcional",
      mood: "¿Cómo te sientes?", moods: ["Insatisfecho", "Neutral", "Satisfecho"],
      nps: "¿Qué probabilidad hay de que nos recomiendes a un amigo o colega?", npsLow: "Poco probable", npsHigh: "Muy probable",
      files: "Adjuntar archivos", remove: "Quitar", send: "Enviar", sending: "Enviando…", more: "Enviar otro comentario",
      network: "No pudimos conectar con el servidor. Revisa tu conexión e inténtalo de nuevo.",
      failed: "Algo salió mal. Inténtalo de nuevo."
    },
    pt: {
      button: "Opinião", title: "Envie sua opinião", close: "Fechar",
      message: "Mensagem", messageHint: "O que você gostaria de nos dizer?",
      email: "E-mail", emailHint: "voce@exemplo.com", name: "Nome", nameHint: "Opcional",
      mood: "Como você se sente?", moods: ["Insatisfeito", "Neutro", "Satisfeito"],
      nps: "Qual a probabilidade de você nos recomendar a um amigo ou colega?", npsLow: "Pouco provável", npsHigh: "Muito provável",
      files: "Anexar arquivos", remove: "Remover", send: "Enviar", sending: "Enviando…", more: "Enviar outra opinião",
      network: "Não foi possível falar com o servidor. Verifique sua conexão e tente novamente.",
      failed: "Algo deu errado. Tente novamente."
    }
  };
  var lang = (data.language || d.documentElement.lang || "en").toLowerCase().slice(0, 2);
  if (!T[lang]) lang = "en";
  var t = T[lang];
  var nps = data.nps === "true", uploads = data.uploads === "true";
  var theme = /^(light|dark)$/.test(data.theme) ? data.theme : "auto";
  var left = data.position === "bottom-left";
  var accent = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.test(data.color || "") ? data.color : "#3e63dd";

  /* Readable text on the accent: dark on light colours, white otherwise. */
  function onAccent(hex) {
    var h = hex.slice(1);
    if (h.length === 3) h = h.replace(/./g, "$&$&");
    var c = [0, 2, 4].map(function (i) {
      var v = parseInt(h.substr(i, 2), 16) / 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2] > 0.45 ? "#111" : "#fff";
  }

  var LIGHT = "--bg:#fff;--fg:#1c2024;--mu:#60646c;--bd:#d9dbe1;--fi:#f8f9fa;--er:#b4232a;--erb:#feebec;--ok:#1d6b47;--okb:#e6f6eb;color-scheme:light;";
  var DARK = "--bg:#1c1e22;--fg:#eceef1;--mu:#a0a5b0;--bd:#3a3d44;--fi:#25282d;--er:#ff9592;--erb:#3b1217;--ok:#7ddba8;--okb:#10291d;color-scheme:dark;";
  var CSS =
    ":host{all:initial}" +
    ".w{--a:" + accent + ";--at:" + onAccent(accent) + ";" + LIGHT + "font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:var(--fg)}" +
    ".w.dark{" + DARK + "}" +
    "@media (prefers-color-scheme:dark){.w.auto{" + DARK + "}}" +
    "*{box-sizing:border-box;font:inherit;color:inherit}" +
    "[hidden]{display:none!important}" +
    "button{cursor:pointer}" +
    ":focus-visible{outline:2px solid var(--a);outline-offset:2px}" +
    ".hp{position:absolute;left:-10000px;top:auto;width:1px;height:1px;overflow:hidden}" +
    ".vh{position:absolute;width:1px;height:1px;margin:-1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0;opacity:0}" +
    ".l{position:fixed;bottom:20px;right:20px;z-index:2147483003;display:flex;align-items:center;gap:8px;border:0;border-radius:999px;padding:11px 18px;background:var(--a);color:var(--at);font-weight:600;box-shadow:0 4px 14px rgba(0,0,0,.22)}" +
    ".l:hover{filter:brightness(1.07)}.l svg{width:18px;height:18px}" +
    ".left .l,.left .p{right:auto;left:20px}" +
    ".bd{position:fixed;inset:0;z-index:2147483001;background:rgba(0,0,0,.06)}" +
    ".p{position:fixed;bottom:76px;right:20px;z-index:2147483002;width:380px;max-width:calc(100vw - 40px);max-height:calc(100vh - 96px);overflow:auto;background:var(--bg);color:var(--fg);border:1px solid var(--bd);border-radius:14px;box-shadow:0 12px 40px rgba(0,0,0,.28);padding:18px 18px 16px}" +
    ".h{display:flex;align-items:center;justify-content:space-between;gap:8px;margin:0 0 12px}" +
    "h2{margin:0;font-size:17px;font-weight:650}" +
    ".x{border:0;background:none;border-radius:8px;width:32px;height:32px;display:grid;place-items:center;color:var(--mu)}.x:hover{background:var(--fi);color:var(--fg)}.x svg{width:18px;height:18px}" +
    "label,legend{display:block;font-weight:600;font-size:13px;margin:0 0 4px;padding:0}" +
    ".f{margin:0 0 12px}.row{display:flex;gap:10px}.row>.f{flex:1;min-width:0}" +
    "textarea,input[type=email],input[type=text]{display:block;width:100%;border:1px solid var(--bd);border-radius:8px;background:var(--fi);padding:8px 10px;font-size:14px}" +
    "textarea{min-height:96px;resize:vertical}" +
    "textarea:focus,input:focus{outline:2px solid var(--a);outline-offset:-1px;border-color:transparent}" +
    "::placeholder{color:var(--mu);opacity:.8}" +
    "fieldset{border:0;margin:0 0 12px;padding:0;min-width:0}" +
    ".o{display:flex;gap:6px}.o label{position:relative;margin:0;font-weight:500}" +
    ".o input{position:absolute;inset:0;width:100%;height:100%;margin:0;opacity:0;cursor:pointer}" +
    ".o span{display:grid;place-items:center;border:1px solid var(--bd);border-radius:8px;background:var(--fi);cursor:pointer;color:var(--mu)}" +
    ".m span{width:44px;height:40px}.m svg{width:24px;height:24px}" +
    ".n{flex-wrap:wrap;gap:4px}.n label{flex:1}.n span{height:32px;font-size:13px;min-width:26px}" +
    ".o input:checked+span{background:var(--a);border-color:var(--a);color:var(--at)}" +
    ".o input:focus-visible+span{outline:2px solid var(--a);outline-offset:2px}" +
    ".o span:hover{border-color:var(--a)}" +
    ".ends{display:flex;justify-content:space-between;font-size:12px;color:var(--mu);margin-top:4px}" +
    ".at{display:inline-flex;align-items:center;gap:6px;border:1px dashed var(--bd);border-radius:8px;padding:6px 10px;font-weight:500;cursor:pointer;color:var(--mu)}" +
    ".at:hover{border-color:var(--a);color:var(--fg)}.at svg{width:16px;height:16px}" +
    "input:focus-visible+.at{outline:2px solid var(--a);outline-offset:2px}" +
    "ul{list-style:none;margin:6px 0 0;padding:0}li{display:flex;align-items:center;justify-content:space-between;gap:8px;font-size:13px;padding:2px 0}" +
    "li span{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}li button{border:0;background:none;color:var(--mu);text-decoration:underline;padding:2px}" +
    ".e{margin:0 0 12px;padding:8px 10px;border-radius:8px;background:var(--erb);color:var(--er)}.e:empty{display:none}" +
    ".s{width:100%;border:0;border-radius:8px;padding:10px;background:var(--a);color:var(--at);font-weight:600}" +
    ".s[aria-disabled=true]{opacity:.65;cursor:progress}" +
    ".ok{padding:8px 0 4px;text-align:center}.ok p{margin:0 0 14px;padding:12px;border-radius:8px;background:var(--okb);color:var(--ok);font-weight:600}" +
    ".ok button{border:1px solid var(--bd);background:var(--fi);border-radius:8px;padding:8px 14px}" +
    "@media (max-width:480px){.p,.left .p{left:0;right:0;bottom:0;width:100%;max-width:none;max-height:92vh;border-radius:16px 16px 0 0;border-width:1px 0 0}.bd{background:rgba(0,0,0,.4)}.l{bottom:14px;right:14px}.left .l{left:14px}.l[aria-expanded=true]{display:none}textarea,input{font-size:16px}}" +
    "@media (prefers-reduced-motion:no-preference){.p{animation:in .16s ease-out}@keyframes in{from{opacity:0;transform:translateY(8px)}}}";

  var SVG = '<svg viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true" focusable="false">';
  var ICON = {
    chat: SVG + '<path d="M21 15a2 2 0 0 1-2 2H7l-4 4V5a2 2 0 0 1 2-2h14a2 2 0 0 1 2 2z"/></svg>',
    x: SVG + '<path d="M18 6 6 18M6 6l12 12"/></svg>',
    clip: SVG + '<path d="m21.4 11.1-9.2 9.2a6 6 0 0 1-8.5-8.5l9.2-9.2a4 4 0 0 1 5.7 5.7l-9.2 9.2a2 2 0 0 1-2.8-2.8l8.5-8.5"/></svg>'
  };
  var MOUTHS = ["M8 16.5q4-3.5 8 0", "M8.5 15.5h7", "M8 14q4 3.5 8 0"];
  var MOODS = ["negative", "neutral", "positive"];
  function face(i) {
    return SVG + '<circle cx="12" cy="12" r="10"/><path d="M9 9.5h.01M15 9.5h.01"/><path d="' + MOUTHS[i] + '"/></svg>';
  }

  /* State: who the user is (identify), the picked files and their uploaded ids. */
  var user = { email: "", name: "", properties: {}, tags: [] };
  var files = [], uploaded = null, opened = false, busy = false, ui = null, want = false;
  /* When the form was last shown (ms, monotonic): the submit says how long it was open. */
  var shownAt = 0;
  function now() { return w.performance && performance.now ? performance.now() : Date.now(); }

  function el(root, sel) { return root.querySelector(sel); }

  function build() {
    var host = d.createElement("earful-widget");
    var root = host.attachShadow({ mode: "open" });
    var sheet = new CSSStyleSheet();
    sheet.replaceSync(CSS);
    root.adoptedStyleSheets = [sheet];
    var moods = MOODS.map(function (m, i) {
      return '<label><input type="radio" name="mood" value="' + m + '" aria-label="' + t.moods[i] + '"><span title="' + t.moods[i] + '">' + face(i) + "</span></label>";
    }).join("");
    var scores = "";
    for (var i = 0; i <= 10; i++) scores += '<label><input type="radio" name="nps" value="' + i + '"><span>' + i + "</span></label>";
    root.innerHTML =
      '<div class="w ' + theme + (left ? " left" : "") + '">' +
      '<button type="button" class="l" aria-haspopup="dialog" aria-expanded="false" aria-controls="ef-d">' + ICON.chat + "<span>" + t.button + "</span></button>" +
      '<div class="bd" hidden></div>' +
      '<div class="p" id="ef-d" role="dialog" aria-modal="true" aria-labelledby="ef-t" hidden>' +
      '<div class="h"><h2 id="ef-t">' + t.title + '</h2><button type="button" class="x" aria-label="' + t.close + '">' + ICON.x + "</button></div>" +
      '<form novalidate>' +
      '<div class="f"><label for="ef-m">' + t.message + '</label><textarea id="ef-m" name="message" required placeholder="' + t.messageHint + '"></textarea></div>' +
      '<div class="row"><div class="f"><label for="ef-e">' + t.email + '</label><input id="ef-e" type="email" name="email" autocomplete="email" required placeholder="' + t.emailHint + '"></div>' +
      '<div class="f"><label for="ef-n">' + t.name + '</label><input id="ef-n" type="text" name="name" autocomplete="name" placeholder="' + t.nameHint + '"></div></div>' +
      '<fieldset><legend>' + t.mood + '</legend><div class="o m">' + moods + "</div></fieldset>" +
      (nps ? '<fieldset class="np"><legend>' + t.nps + '</legend><div class="o n">' + scores + '</div><div class="ends" aria-hidden="true"><span>0 · ' + t.npsLow + "</span><span>10 · " + t.npsHigh + "</span></div></fieldset>" : "") +
      (uploads ? '<div class="f"><input class="vh" id="ef-f" type="file" multiple><label class="at" for="ef-f">' + ICON.clip + t.files + "</label><ul></ul></div>" : "") +
      /* The honeypot: off-screen and out of the tab order, so people never fill it; bots that
       * fill every field do, and their submit is answered as usual and dropped. */
      '<div class="hp" aria-hidden="true"><label for="ef-w">Website</label><input id="ef-w" type="text" name="website" tabindex="-1" autocomplete="off"></div>' +
      '<p class="e" role="alert"></p>' +
      '<button type="submit" class="s">' + t.send + "</button>" +
      "</form>" +
      '<div class="ok" hidden><p role="status"></p><button type="button">' + t.more + "</button></div>" +
      "</div></div>";
    var u = {
      root: root, launcher: el(root, ".l"), backdrop: el(root, ".bd"), panel: el(root, ".p"), form: el(root, "form"),
      message: el(root, "#ef-m"), email: el(root, "#ef-e"), name: el(root, "#ef-n"), file: el(root, "#ef-f"), trap: el(root, "#ef-w"),
      list: el(root, "ul"), error: el(root, ".e"), send: el(root, ".s"), done: el(root, ".ok")
    };
    u.status = el(u.done, "p");
    u.launcher.addEventListener("click", function () { u.panel.hidden ? open() : close(); });
    el(root, ".x").addEventListener("click", close);
    u.backdrop.addEventListener("click", close);
    el(u.done, "button").addEventListener("click", function () { u.done.hidden = true; u.form.hidden = false; shownAt = now(); u.message.focus(); });
    u.panel.addEventListener("keydown", keydown);
    u.form.addEventListener("submit", function (e) { e.preventDefault(); submit(); });
    if (u.file) u.file.addEventListener("change", function () {
      files = files.concat([].slice.call(u.file.files));
      u.file.value = "";
      uploaded = null;
      renderFiles();
    });
    d.body.appendChild(host);
    ui = u;
    prefill();
    if (want) open();
  }

  function renderFiles() {
    ui.list.textContent = "";
    files.forEach(function (file, i) {
      var li = d.createElement("li"), name = d.createElement("span"), drop = d.createElement("button");
      name.textContent = file.name;
      drop.type = "button";
      drop.textContent = t.remove;
      drop.setAttribute("aria-label", t.remove + " " + file.name);
      drop.addEventListener("click", function () {
        files.splice(i, 1);
        uploaded = null;
        renderFiles();
        ui.file.focus();
      });
      li.appendChild(name);
      li.appendChild(drop);
      ui.list.appendChild(li);
    });
  }

  /* Fill e-mail and name from identify, unless the user typed something else. */
  function prefill() {
    if (!ui) return;
    if (user.email && !ui.email.value) ui.email.value = user.email;
    if (user.name && !ui.name.value) ui.name.value = user.name;
  }

  function focusables() {
    return [].filter.call(ui.panel.querySelectorAll("button,input,textarea"), function (e) {
      return !e.disabled && e.getClientRects().length;
    });
  }

  function keydown(e) {
    if (e.key === "Escape") {
      e.preventDefault();
      e.stopPropagation();
      close();
    } else if (e.key === "Tab") {
      var list = focusables(), first = list[0], last = list[list.length - 1], active = ui.root.activeElement;
      /* The first and last are always buttons (close, send or "send more"): radios need no care. */
      if (e.shiftKey ? active === first || list.indexOf(active) < 0 : active === last) {
        e.preventDefault();
        (e.shiftKey ? last : first).focus();
      }
    }
  }

  function post(path, body, headers) {
    var url = base + "/applications/" + app + "/" + path + "?key=" + encodeURIComponent(key);
    var attempt = function () { return fetch(url, { method: "POST", body: body, headers: headers, credentials: "omit" }); };
    /* Retry once on a network failure (never on an HTTP answer, 4xx or otherwise). */
    return attempt().catch(function () {
      return new Promise(function (ok) { setTimeout(ok, 800); }).then(attempt);
    }).then(null, function () { throw { network: true }; });
  }

  function answer(response) {
    return response.text().then(function (text) {
      if (response.ok) return text;
      throw { text: response.status < 500 && text ? text : t.failed };
    });
  }

  function open() {
    if (!ui) { want = true; return; }
    if (!ui.panel.hidden) return;
    ui.panel.hidden = ui.backdrop.hidden = false;
    ui.launcher.setAttribute("aria-expanded", "true");
    if (!ui.form.hidden && !shownAt) shownAt = now();
    prefill();
    (ui.form.hidden ? el(ui.done, "button") : ui.message).focus();
    if (!opened) {
      opened = true;
      post("open").catch(function () {});
    }
  }

  function close() {
    if (!ui || ui.panel.hidden) return;
    ui.panel.hidden = ui.backdrop.hidden = true;
    ui.launcher.setAttribute("aria-expanded", "false");
    ui.launcher.focus();
  }

  function checked(name) {
    var input = ui.form.querySelector('input[name="' + name + '"]:checked');
    return input ? input.value : null;
  }

  function submit() {
    if (busy) return;
    busy = true;
    ui.send.setAttribute("aria-disabled", "true");
    ui.send.textContent = t.sending;
    ui.error.textContent = "";
    var ids = uploaded || [];
    var upload = Promise.resolve(ids);
    if (files.length && !uploaded) {
      var body = new FormData();
      files.forEach(function (file) { body.append("file", file, file.name); });
      upload = post("upload", body).then(answer).then(function (text) { return (uploaded = JSON.parse(text)); });
    }
    upload.then(function (ids) {
      var payload = {
        message: ui.message.value, email: ui.email.value.trim(), name: ui.name.value.trim(),
        language: lang, url: location.href, attachments: ids,
        honeypot: ui.trap.value, fill_time_ms: Math.max(0, Math.round(now() - shownAt))
      };
      var mood = checked("mood"), score = checked("nps");
      if (mood) payload.sentiment = mood;
      if (score !== null) payload.nps = +score;
      if (Object.keys(user.properties).length) payload.properties = JSON.stringify(user.properties);
      if (user.tags.length) payload.tags = JSON.stringify(user.tags);
      return post("submit", JSON.stringify(payload), { "Content-Type": "text/plain;charset=UTF-8" }).then(answer);
    }).then(function (text) {
      var keep = [ui.email.value, ui.name.value];
      ui.form.reset();
      ui.email.value = keep[0];
      ui.name.value = keep[1];
      files = [];
      uploaded = null;
      opened = false;
      shownAt = 0;
      if (ui.file) renderFiles();
      ui.status.textContent = text;
      ui.form.hidden = true;
      ui.done.hidden = false;
      el(ui.done, "button").focus();
    }, function (error) {
      ui.error.textContent = error && error.network ? t.network : (error && error.text) || t.failed;
    }).then(function () {
      busy = false;
      ui.send.removeAttribute("aria-disabled");
      ui.send.textContent = t.send;
    });
  }

  var commands = {
    identify: function (who) {
      who = who || {};
      if (typeof who.email === "string") user.email = who.email;
      if (typeof who.name === "string") user.name = who.name;
      if (who.properties && typeof who.properties === "object") {
        for (var k in who.properties) if (Object.prototype.hasOwnProperty.call(who.properties, k)) user.properties[k] = who.properties[k];
      }
      if (Array.isArray(who.tags)) user.tags = who.tags.map(String);
      prefill();
    },
    open: open,
    close: close
  };
  function run(args) {
    var command = commands[args[0]];
    if (command) command.apply(null, [].slice.call(args, 1));
  }
  var queue = (w.Earful && w.Earful.q) || [];
  w.Earful = function () { run(arguments); };
  w.Earful.loaded = true;
  queue.forEach(run);
  if (d.body) build();
  else d.addEventListener("DOMContentLoaded", build);
})();
