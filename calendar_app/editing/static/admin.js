// The editing pages work without this script; it only adds search-as-you-type to the
// venue and organizer pickers, a likely-duplicate note for a new one, and a live
// preview of a recurring event's dates. Dates are never converted here: the form
// posts wall times and the zone name, and the server does the rest.
(function () {
  "use strict";
  var form = document.getElementById("record-form");
  if (!form) { return; }
  var api = "/admin/api/";
  var words = JSON.parse(form.dataset.words || "{}"); /* in the page's language */

  function debounce(fn, ms) {
    var timer = null;
    return function () {
      var args = arguments, self = this;
      clearTimeout(timer);
      timer = setTimeout(function () { fn.apply(self, args); }, ms);
    };
  }

  function getJSON(url, done) {
    fetch(url, {credentials: "same-origin"}).then(function (r) {
      return r.ok ? r.json() : [];
    }).then(done).catch(function () {});
  }

  form.querySelectorAll("[data-picker]").forEach(function (input) {
    var list = document.getElementById(input.getAttribute("list"));
    input.addEventListener("input", debounce(function () {
      var q = input.value.trim();
      if (q.length < 2 || /\(#\d+\)$/.test(q)) { return; }
      getJSON(api + input.dataset.picker + "/search?q=" + encodeURIComponent(q), function (items) {
        list.textContent = "";
        items.forEach(function (item) {
          var option = document.createElement("option");
          option.value = item.text;
          if (item.city) { option.label = item.text + ", " + item.city; }
          list.appendChild(option);
        });
      });
    }, 120));
  });

  form.querySelectorAll("[data-duplicates]").forEach(function (input) {
    var note = input.closest("details").querySelector("[data-duplicate-note]");
    input.addEventListener("input", debounce(function () {
      var name = input.value.trim();
      if (!name) { note.hidden = true; return; }
      getJSON(api + input.dataset.duplicates + "/duplicates?name=" + encodeURIComponent(name), function (items) {
        note.hidden = items.length === 0;
        note.textContent = items.length ? (words.duplicate || "{names}").replace(
          "{names}", items.map(function (i) { return i.text; }).join(", ")) : "";
      });
    }, 200));
  });

  var section = document.getElementById("occurrences");
  var watched = /^(recurrence\.|start_date$|end_date$|timezone$|all_day$)/;
  function preview() {
    var data = new FormData(form);
    fetch(api + "events/preview", {method: "POST", body: data, credentials: "same-origin",
                                   headers: {"X-CSRFToken": data.get("csrf_token")}})
      .then(function (r) { return r.json(); })
      .then(function (answer) { show(answer); }).catch(function () {});
  }
  function show(answer) {
    var heading = document.getElementById("dates-heading");
    section.textContent = "";
    section.appendChild(heading);
    var p = document.createElement("p");
    if (!answer.ok) {
      p.className = "field-error";
      var messages = [];
      Object.keys(answer.errors || {}).forEach(function (k) { messages = messages.concat(answer.errors[k]); });
      p.textContent = messages.concat(answer.general || []).join(" ");
      section.appendChild(p);
      section.hidden = false;
      return;
    }
    if (!answer.preview) { section.hidden = true; return; }
    var pv = answer.preview;
    p.textContent = pv.text;
    section.appendChild(p);
    var ol = document.createElement("ol");
    ol.className = "dates";
    pv.dates.forEach(function (d) {
      var li = document.createElement("li");
      li.textContent = d.text;
      ol.appendChild(li);
    });
    section.appendChild(ol);
    section.hidden = false;
  }
  if (section && form.querySelector("[name='recurrence.kind']")) {
    var later = debounce(preview, 300);
    form.addEventListener("change", function (event) {
      if (watched.test(event.target.name || "")) { later(); }
    });
  }
})();
