// jobclock dashboard: live refresh of the parts of a page marked data-live,
// and forms marked data-async sent without a full reload. The pages work
// without it: forms post and redirect, and a reload shows what changed.
(function () {
  "use strict";

  var body = document.body;
  var every = parseInt(body.getAttribute("data-refresh") || "0", 10);
  var busy = false;

  // swap replaces the live parts of the page that changed with those of
  // html, keeping the messages the reader opened. Parts that did not
  // change are left alone, so that what the reader is about to click
  // stays where it is. The flash message changes only after an action.
  function swap(html, withFlash) {
    var doc = new DOMParser().parseFromString(html, "text/html");
    var parts = document.querySelectorAll("[data-live][id]");
    for (var i = 0; i < parts.length; i++) {
      var old = parts[i];
      var fresh = doc.getElementById(old.id);
      if (!fresh || old.id === "flash" && !withFlash || old.innerHTML === fresh.innerHTML) {
        continue;
      }
      var open = {};
      var ds = old.querySelectorAll("details[open] > summary");
      for (var j = 0; j < ds.length; j++) {
        open[ds[j].textContent] = true;
      }
      old.innerHTML = fresh.innerHTML;
      var ns = old.querySelectorAll("details > summary");
      for (var k = 0; k < ns.length; k++) {
        if (open[ns[k].textContent]) {
          ns[k].parentNode.open = true;
        }
      }
    }
    bindForms(document);
  }

  function load(url, init) {
    init = init || {};
    init.credentials = "same-origin";
    init.headers = { "X-Requested-With": "fetch" };
    return fetch(url, init).then(function (res) {
      return res.text().then(function (text) {
        return { res: res, text: text };
      });
    });
  }

  function refresh() {
    if (busy || document.hidden || !liveOn()) {
      return;
    }
    busy = true;
    load(location.href).then(function (r) {
      var path = new URL(r.res.url).pathname;
      if (r.res.ok && path === location.pathname) {
        swap(r.text, false);
      }
    }).catch(function () {}).then(function () {
      busy = false;
    });
  }

  function liveOn() {
    try {
      return localStorage.getItem("jobclock-live") !== "off";
    } catch (e) {
      return true;
    }
  }

  function bindForms(root) {
    var forms = root.querySelectorAll("form[data-async]");
    for (var i = 0; i < forms.length; i++) {
      var f = forms[i];
      if (f.jobclockBound) {
        continue;
      }
      f.jobclockBound = true; // a property, not an attribute: innerHTML stays comparable
      f.addEventListener("submit", submit);
    }
  }

  function submit(ev) {
    var form = ev.currentTarget;
    ev.preventDefault();
    var button = form.querySelector("button");
    if (button) {
      button.setAttribute("aria-busy", "true");
      button.disabled = true;
    }
    busy = true;
    load(form.action, { method: "POST", body: new URLSearchParams(new FormData(form)) }).then(function (r) {
      var path = new URL(r.res.url).pathname;
      if (r.res.ok && path !== location.pathname) {
        location.assign(r.res.url);
        return;
      }
      if (r.res.ok) {
        swap(r.text, true);
        return;
      }
      var doc = new DOMParser().parseFromString(r.text, "text/html");
      var msg = doc.querySelector(".problem");
      var flash = document.getElementById("flash");
      if (flash) {
        flash.innerHTML = "";
        var p = document.createElement("p");
        p.className = "problem";
        p.setAttribute("role", "alert");
        p.textContent = msg ? msg.textContent : "The request failed (" + r.res.status + ").";
        flash.appendChild(p);
      }
    }).catch(function () {
      form.submit();
    }).then(function () {
      busy = false;
      if (button) {
        button.removeAttribute("aria-busy");
        button.disabled = false;
      }
    });
  }

  bindForms(document);
  if (every > 0) {
    var toggle = document.getElementById("live-toggle");
    if (toggle) {
      toggle.checked = liveOn();
      toggle.parentNode.hidden = false;
      toggle.addEventListener("change", function () {
        try {
          localStorage.setItem("jobclock-live", toggle.checked ? "on" : "off");
        } catch (e) {}
      });
    }
    setInterval(refresh, every);
  }
})();
