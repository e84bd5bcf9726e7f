/* <calendar-events>: upcoming events of this calendar inside any web page.
   <script src="https://…/assets/embed.js" defer></script>
   <calendar-events count="5" category="jazz" venue="the-blue-lantern" language="de"></calendar-events>
   Reads the interface's JSON: the build's snapshot of the query it needs first
   (wp-json/…/events/embed/: all upcoming events, a category's, a venue's, or a
   category's at a venue), else
   the live interface; keeps the events that have not ended and match the attributes.
   Its words come in the `language` attribute's language (else the page's, else the
   calendar's) when the calendar has a catalog for it: the build fills in WORDS.
   The markup is plain (no shadow DOM) so that it takes the host page's look. */
(function () {
  "use strict";
  var script = document.currentScript;
  var root = new URL("..", script ? script.src : location.href); /* assets/ is one down */
  var api = new URL("wp-json/tribe/events/v1/", root);
  var loads = {};
  var WORDS = {/*words*/};
  var ENGLISH = { loading: "Loading events…", none: "No upcoming events.", all: "All events",
    failed: "The events could not be loaded.", see: "See the calendar", label: "Upcoming events" };

  /* The words of a language tag ("de-AT": German), else of the calendar's language. */
  function wordsFor(lang) {
    var all = WORDS.languages || {};
    var primary = String(lang || "").toLowerCase().split(/[-_]/)[0];
    return primary === "en" ? ENGLISH : all[primary] || all[WORDS.site] || ENGLISH;
  }

  function getJson(url) {
    if (!loads[url]) {
      loads[url] = fetch(url, { credentials: "omit" }).then(function (r) {
        if (!r.ok) { throw new Error(url + ": " + r.status); }
        return r.json();
      });
      loads[url].catch(function () { delete loads[url]; });
    }
    return loads[url];
  }

  /* The snapshots answering the query, best first: with both filters the pair's
     (written only where the venue's list misses some of its events), then the
     venue's (a venue has fewer events than a category); by slug or by id. */
  function snapshotsOf(category, venue) {
    function one(kind, name) {
      var byId = /^\d+$/.test(name);
      return "events/embed/" + kind + (byId ? "-id/" : "/") + encodeURIComponent(name) + ".json";
    }
    if (category && venue) {
      return ["events/embed/pair/" + encodeURIComponent(category) + "/" +
        encodeURIComponent(venue) + ".json", one("venue", venue)];
    }
    return venue ? [one("venue", venue)] : category ? [one("category", category)] : [];
  }

  /* The first of these addresses that answers: a filter's snapshot, then all upcoming
     events (a category or venue newer than the build), then the live interface. */
  function eventsFrom(urls) {
    var answer = getJson(urls[0]);
    urls.slice(1).forEach(function (url) {
      answer = answer.catch(function () { return getJson(url); });
    });
    return answer.then(function (body) { return Array.isArray(body.events) ? body.events : []; });
  }

  /* Titles come as HTML (entities, typographic quotes): shown as text, never as markup. */
  function text(html) {
    return new DOMParser().parseFromString(String(html || ""), "text/html").body.textContent;
  }

  function link(value) {
    try {
      var url = new URL(value, root);
      return /^https?:$/.test(url.protocol) ? url.href : null;
    } catch (e) { return null; }
  }

  function named(record, wanted) {
    return !!record && typeof record === "object" &&
      (String(record.slug || "").toLowerCase() === wanted || String(record.id) === wanted);
  }

  function utc(value) { return new Date(String(value || "").replace(" ", "T") + "Z"); }

  function when(event, lang) {
    var options = { weekday: "short", month: "short", day: "numeric" };
    var moment = utc(event.utc_start_date);
    if (event.all_day) {
      moment = utc(String(event.start_date || "").slice(0, 10) + " 00:00:00");
      options.timeZone = "UTC";
    } else {
      options.hour = "numeric";
      options.minute = "2-digit";
      options.timeZone = event.timezone || undefined;
    }
    try { return new Intl.DateTimeFormat(lang, options).format(moment); } catch (e) {
      delete options.timeZone;
      return new Intl.DateTimeFormat(undefined, options).format(moment);
    }
  }

  function add(parent, tag, className, content, words) {
    var node = document.createElement(tag);
    if (className) { node.className = className; }
    if (content) { node.textContent = content; }
    if (words && words.lang) { node.lang = words.lang; node.dir = words.dir || "ltr"; }
    parent.appendChild(node);
    return node;
  }

  var styled = false;
  function style() {
    if (styled) { return; }
    styled = true;
    var css = document.createElement("style");
    css.textContent = "calendar-events{display:block}" +
      ".calendar-events-list{list-style:none;margin:0;padding:0}" +
      ".calendar-event{margin:0 0 .75em}.calendar-event a{font-weight:600}" +
      ".calendar-event time,.calendar-event-venue{display:block;font-size:.9em}";
    document.head.insertBefore(css, document.head.firstChild);
  }

  class CalendarEvents extends HTMLElement {
    static get observedAttributes() { return ["category", "venue", "count", "language"]; }
    connectedCallback() { this.show(); }
    attributeChangedCallback() { if (this.isConnected) { this.show(); } }
    show() { show(this); }
  }

  function show(self) {
    var ticket = self.ticket = (self.ticket || 0) + 1;
    var count = Math.min(50, Math.max(1, parseInt(self.getAttribute("count"), 10) || 5));
    var category = (self.getAttribute("category") || "").trim().toLowerCase();
    var venue = (self.getAttribute("venue") || "").trim().toLowerCase();
    var lang = self.getAttribute("language") || document.documentElement.lang || undefined;
    var words = wordsFor(lang);
    var query = "events?per_page=50" + (category ? "&categories=" + encodeURIComponent(category) : "") +
      (/^\d+$/.test(venue) ? "&venue=" + venue : "");
    style();
    self.textContent = "";
    var status = add(self, "p", "calendar-events-status", words.loading, words);
    status.setAttribute("role", "status");
    var urls = snapshotsOf(category, venue).concat(["events/embed/all.json", query]).map(function (u) {
      return new URL(u, api).href;
    });
    eventsFrom(urls).then(function (events) {
      if (ticket !== self.ticket) { return; }
      var now = Date.now();
      var shown = events.filter(function (e) {
        return utc(e.utc_end_date).getTime() >= now &&
          (!category || (e.categories || []).some(function (c) { return named(c, category); })) &&
          (!venue || named(e.venue, venue));
      }).slice(0, count);
      status.textContent = shown.length ? "" : words.none;
      if (!shown.length) { return; }
      var list = add(self, "ul", "calendar-events-list", "", words);
      list.setAttribute("aria-label", words.label);
      if (lang) { list.lang = lang; }
      shown.forEach(function (e) {
        var item = add(list, "li", "calendar-event");
        var href = link(e.url);
        var title = add(item, href ? "a" : "span", "calendar-event-title", text(e.title));
        if (href) { title.href = href; }
        var time = add(item, "time", "", when(e, lang));
        time.dateTime = e.all_day ? String(e.start_date).slice(0, 10)
          : utc(e.utc_start_date).toISOString();
        if (e.venue && e.venue.venue) { add(item, "span", "calendar-event-venue", text(e.venue.venue)); }
      });
      var more = add(self, "p", "calendar-events-more", "", words);
      var all = add(more, "a", "", words.all);
      all.href = new URL("events/list/", root).href;
    }, function () {
      if (ticket !== self.ticket) { return; }
      status.textContent = words.failed + " ";
      var all = add(status, "a", "", words.see);
      all.href = new URL("events/list/", root).href;
    });
  }

  if (window.customElements && !customElements.get("calendar-events")) {
    customElements.define("calendar-events", CalendarEvents);
  }
}());
