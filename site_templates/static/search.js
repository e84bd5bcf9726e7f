/* The search page: searches the prebuilt index (search-index.js, made by the build)
   in the browser. A word matches the start of a word of an event's title, its
   venue's name or city, or its excerpt, ignoring case and accents; every word must
   match, and so must the chosen category (or a subcategory of it), venue and "free".
   The query is kept in the address (?q=&category=&venue=&free=1), as the header's
   search box sends it. */
(function () {
  "use strict";
  var index = window.calendarSearchIndex;
  var form = document.getElementById("search-form");
  var status = document.getElementById("search-status");
  var results = document.getElementById("search-results");
  var LIMIT = 100;
  if (!index || !form) { return; }
  var root = form.getAttribute("data-root");
  var fields = {q: form.elements.q, category: form.elements.category,
                venue: form.elements.venue, free: form.elements.free};

  function fold(text) {
    return text.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) || [];
  }

  var parents = {};
  index.categories.forEach(function (c) { parents[c[0]] = c[2]; });
  var venues = {};
  index.venues.forEach(function (v) { venues[v[0]] = {name: v[1], words: fold(v[1] + " " + v[2])}; });
  // [path, title, start, end (UTC seconds), venue, categories, free, words]
  var events = index.events.map(function (row) {
    var venue = venues[row[4]];
    var cats = {};
    row[5].forEach(function (id) {
      for (var seen = 0; id && seen < 20; seen += 1) { cats[id] = true; id = parents[id]; }
    });
    return {path: row[0], title: row[1], start: row[2], end: row[3] * 1000,
            venue: venue, venueId: row[4], categories: cats, free: row[6] === 1,
            words: fold(row[1]).concat(venue ? venue.words : [], row[7].split(" "))};
  });

  function matches(event, terms, category, venue, free) {
    if (free && !event.free) { return false; }
    if (category && !event.categories[category]) { return false; }
    if (venue && event.venueId !== venue) { return false; }
    return terms.every(function (term) {
      return event.words.some(function (word) { return word.startsWith(term); });
    });
  }

  var site = window.calendarSite;
  var dayFormat = new Intl.DateTimeFormat(site.lang, {timeZone: "UTC", weekday: "short",
    month: "short", day: "numeric", year: "numeric"});
  var timeFormat = new Intl.DateTimeFormat(site.lang, {timeZone: "UTC", hour: "numeric",
    minute: "2-digit"});

  function shownDate(start) {
    // The event's local wall time, written as UTC so the reader's zone cannot shift it.
    var p = start.split(/[-T:]/).map(Number);
    var moment = new Date(Date.UTC(p[0], p[1] - 1, p[2], p[3] || 0, p[4] || 0));
    var text = dayFormat.format(moment);
    return p.length > 3 ? text + ", " + timeFormat.format(moment).toLowerCase() : text;
  }

  function item(event, now) {
    var li = document.createElement("li");
    var link = document.createElement("a");
    link.href = root + event.path + "index.html";  // as every link of the site: file:// too
    link.textContent = event.title;
    var when = document.createElement("time");
    when.setAttribute("datetime", event.start);
    when.textContent = shownDate(event.start);
    li.append(link, " ", when);
    if (event.venue) { li.append(" · " + event.venue.name); }
    if (event.end < now) {
      var past = document.createElement("span");
      past.className = "search-past";
      past.textContent = site.text.past;
      li.append(" ", past);
    }
    return li;
  }

  function search() {
    var terms = fold(fields.q.value);
    var category = Number(fields.category.value) || 0;
    var venue = Number(fields.venue.value) || 0;
    var free = fields.free.checked;
    var params = new URLSearchParams();
    if (fields.q.value.trim()) { params.set("q", fields.q.value.trim()); }
    if (category) { params.set("category", category); }
    if (venue) { params.set("venue", venue); }
    if (free) { params.set("free", "1"); }
    history.replaceState(null, "", params.toString() ? "?" + params : location.pathname);
    results.textContent = "";
    if (!terms.length && !category && !venue && !free) {
      status.textContent = site.text.type;
      return;
    }
    var now = Date.now();
    var found = events.filter(function (e) { return matches(e, terms, category, venue, free); });
    // Upcoming first, soonest first; then past ones, latest first.
    var upcoming = found.filter(function (e) { return e.end >= now; });
    var past = found.filter(function (e) { return e.end < now; }).reverse();
    found = upcoming.concat(past);
    found.slice(0, LIMIT).forEach(function (e) { results.append(item(e, now)); });
    status.textContent = !found.length ? site.text.none
      : found.length > LIMIT
        ? window.calendarCounted(site, "shown", found.length).replace("{limit}", LIMIT)
        : window.calendarCounted(site, "found", found.length);
  }

  var params = new URLSearchParams(location.search);
  fields.q.value = params.get("q") || "";
  fields.category.value = params.get("category") || "";
  fields.venue.value = params.get("venue") || "";
  fields.free.checked = params.get("free") === "1";
  form.hidden = false;
  var timer = 0;
  form.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(search, 80);
  });
  form.addEventListener("change", search);
  form.addEventListener("submit", function (event) { event.preventDefault(); search(); });
  search();
})();
