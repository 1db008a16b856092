// jobclock dashboard: live refresh of the parts of a page marked data-live,
// and forms marked data-async sent without a full reload. The pages work
// without it: forms post and redirect, and a reload shows what changed.
(function () {
  "use strict";

  var body = document.body;
  var every = parseInt(body.getAttribute("data-refresh") || "0", 10);
  var busy = false;
  var over = false; // the session ended or the page's job is gone

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
    if (busy || over || document.hidden || !liveOn()) {
      return;
    }
    busy = true;
    load(location.href).then(function (r) {
      var path = new URL(r.res.url).pathname;
      if (r.res.ok && path === location.pathname) {
        swap(r.text, false);
        return;
      }
      gone(r);
    }).catch(function () {}).then(function () {
      busy = false;
    });
  }

  // gone ends the page when an answer says that the session is over (a
  // redirect to the sign-in page, or 401) or that what the page shows no
  // longer exists (404): it says so, and offers no action any more. It
  // returns whether it did.
  function gone(r) {
    var path = new URL(r.res.url).pathname;
    if (path === body.getAttribute("data-login") || r.res.status === 401) {
      end("Your session has ended: you signed out, it expired, or its token is no longer accepted. " +
        "What this page shows may be out of date, and it can change nothing.", "Sign in again",
        r.res.status === 401 ? body.getAttribute("data-login") : r.res.url);
      return true;
    }
    if (r.res.status === 404) {
      end("This " + (body.getAttribute("data-what") || "page") + " no longer exists: it was deleted (or you may no longer see it). " +
        "The page shows it as it was, and it can change nothing.", "Back to the overview", body.getAttribute("data-home"));
      return true;
    }
    return false;
  }

  // end shows message with a link, stops the live refresh and takes
  // away every form of the page's content.
  function end(message, linkText, href) {
    if (over) {
      return;
    }
    over = true;
    var flash = document.getElementById("flash");
    if (flash) {
      flash.innerHTML = "";
      var p = document.createElement("p");
      p.className = "problem";
      p.id = "page-ended";
      p.setAttribute("role", "alert");
      p.textContent = message + " ";
      var a = document.createElement("a");
      a.href = href;
      a.textContent = linkText;
      p.appendChild(a);
      flash.appendChild(p);
    }
    var main = document.getElementById("main");
    var hide = main ? main.querySelectorAll("form, a.button, #actions, .operate") : [];
    for (var i = 0; i < hide.length; i++) {
      hide[i].hidden = true;
    }
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
      if (gone(r)) {
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

  // The job editor checks the draft as the user types (after a pause of
  // checkDelay ms) with POST /draft, which changes nothing: the problems at
  // their fields, the schedule in words and the next occurrences. With the
  // form, the JSON editor shows the definition the form makes; switching
  // to the form fills it from the JSON.
  var checkDelay = 300;

  function editor(form) {
    var url = form.getAttribute("data-draft");
    var fields = document.getElementById("form-fields");
    var def = document.getElementById("definition");
    var timer = 0;
    var seq = 0;
    var lastForm = null;

    function mode() {
      var m = form.querySelector('input[name="mode"]:checked');
      return m ? m.value : "json";
    }

    function showMode() {
      var onForm = mode() === "form";
      fields.hidden = !onForm;
      def.readOnly = onForm;
    }

    function check() {
      var n = ++seq;
      load(url, { method: "POST", body: new URLSearchParams(new FormData(form)) }).then(function (r) {
        if (n === seq && r.res.ok) {
          show(JSON.parse(r.text));
        }
      }).catch(function () {});
    }

    function later() {
      clearTimeout(timer);
      timer = setTimeout(check, checkDelay);
    }

    // fieldFor returns the visible field whose data-path is the longest
    // prefix of path.
    function fieldFor(path) {
      var best = null;
      var els = form.querySelectorAll("[data-path]");
      for (var i = 0; i < els.length; i++) {
        var el = els[i];
        var p = el.getAttribute("data-path");
        var next = path.charAt(p.length);
        if (path.indexOf(p) !== 0 || next !== "" && next !== "." && next !== "[" || el.closest("[hidden]")) {
          continue;
        }
        if (!best || p.length > best.getAttribute("data-path").length) {
          best = el;
        }
      }
      return best;
    }

    function show(a) {
      var old = form.querySelectorAll("[aria-invalid]");
      for (var i = 0; i < old.length; i++) {
        old[i].removeAttribute("aria-invalid");
      }
      var notes = form.querySelectorAll(".field-error.at-field");
      for (var j = 0; j < notes.length; j++) {
        notes[j].parentNode.removeChild(notes[j]);
      }
      var list = document.getElementById("draft-problems");
      list.textContent = "";
      a.problems.forEach(function (p) {
        var li = document.createElement("li");
        li.className = "field-error";
        li.setAttribute("data-path", p.path);
        li.textContent = p.message;
        list.appendChild(li);
        var el = fieldFor(p.path);
        if (el) {
          el.setAttribute("aria-invalid", "true");
          var note = document.createElement("span");
          note.className = "field-error at-field";
          note.textContent = p.message;
          el.parentNode.appendChild(note);
        }
      });
      var n = a.problems.length;
      document.getElementById("draft-status").textContent = n === 0 ? "Valid." : n + (n === 1 ? " problem" : " problems");
      document.getElementById("draft-schedule").textContent = a.schedule ? "Runs " + a.schedule + "." : "";
      var next = document.getElementById("draft-next");
      next.textContent = "";
      a.next.forEach(function (t) {
        var li = document.createElement("li");
        li.textContent = t.utc + (t.local ? " · " + t.local : "");
        next.appendChild(li);
      });
      document.getElementById("draft-note").textContent = a.note || "";
      if (mode() === "form") {
        def.value = a.definition;
      } else {
        // The form shows the JSON only when it can show all of it the
        // form covers: an HTTP action, a recurrence with a frequency,
        // valid JSON.
        lastForm = a.form || null;
        document.getElementById("mode-form").disabled = !lastForm;
      }
    }

    function fill(f) {
      // A select gets an option for a value it does not offer, so that
      // it shows the definition's value and saving writes it back.
      var set = function (name, v) {
        var el = form.elements[name];
        if (!el || v === undefined) {
          return;
        }
        if (el.tagName === "SELECT" && v !== "") {
          var found = false;
          for (var i = 0; i < el.options.length; i++) {
            found = found || el.options[i].value === v;
          }
          if (!found) {
            el.appendChild(new Option(v, v));
          }
        }
        el.value = v;
      };
      set("method", f.Method || "GET");
      set("uri", f.URI);
      set("headers", f.Headers);
      set("body", f.Body);
      set("frequency", f.Frequency);
      set("interval", f.Interval);
      set("hours", f.Hours);
      set("minutes", f.Minutes);
      set("startTime", f.StartTime);
      set("retryType", f.RetryType);
      set("retryInterval", f.RetryInterval);
      set("retryCount", f.RetryCount);
      var days = form.querySelectorAll('input[name="weekDays"]');
      for (var i = 0; i < days.length; i++) {
        days[i].checked = (f.WeekDays || []).indexOf(days[i].value) >= 0;
      }
    }

    form.addEventListener("input", later);
    form.addEventListener("change", function (ev) {
      if (ev.target.name === "mode") {
        if (mode() === "form" && lastForm) {
          fill(lastForm);
        }
        showMode();
        check();
        return;
      }
      later();
    });
    showMode();
    check();
  }

  var jobEditor = document.getElementById("job-editor");
  if (jobEditor) {
    editor(jobEditor);
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
