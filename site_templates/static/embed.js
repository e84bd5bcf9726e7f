/* <calendar-events>: upcoming events of this calendar inside any web page.
   <script src="https://…/assets/embed.js" defer></script>
   <calendar-events count="5" category="jazz" venue="the-blue-lantern" language="de"></calendar-events>
   Reads the interface's JSON: the build's snapshot (wp-json/…/events.json) first, else
   the live interface; keeps the events that have not ended and match the attributes.
   The markup is plain (no shadow DOM) so that it takes the host page's look. */
(function () {
  "use strict";
  var script = document.currentScript;
  var root = new URL("..", script ? script.src : location.href); /* assets/ is one down */
  var api = new URL("wp-json/tribe/events/v1/", root);
  var loads = {};

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

  function eventsFrom(snapshot, live) {
    return getJson(snapshot).catch(function () { return getJson(live); })
      .then(function (body) { return Array.isArray(body.events) ? body.events : []; });
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

  function add(parent, tag, className, content) {
    var node = document.createElement(tag);
    if (className) { node.className = className; }
    if (content) { node.textContent = content; }
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
    var query = "events?per_page=50" + (category ? "&categories=" + encodeURIComponent(category) : "") +
      (/^\d+$/.test(venue) ? "&venue=" + venue : "");
    style();
    self.textContent = "";
    var status = add(self, "p", "calendar-events-status", "Loading events…");
    status.setAttribute("role", "status");
    eventsFrom(new URL("events.json", api).href, new URL(query, api).href).then(function (events) {
      if (ticket !== self.ticket) { return; }
      var now = Date.now();
      var shown = events.filter(function (e) {
        return utc(e.utc_end_date).getTime() >= now &&
          (!category || (e.categories || []).some(function (c) { return named(c, category); })) &&
          (!venue || named(e.venue, venue));
      }).slice(0, count);
      status.textContent = shown.length ? "" : "No upcoming events.";
      if (!shown.length) { return; }
      var list = add(self, "ul", "calendar-events-list");
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
      var more = add(self, "p", "calendar-events-more");
      var all = add(more, "a", "", "All events");
      all.href = new URL("events/list/", root).href;
    }, function () {
      if (ticket !== self.ticket) { return; }
      status.textContent = "The events could not be loaded. ";
      var all = add(status, "a", "", "See the calendar");
      all.href = new URL("events/list/", root).href;
    });
  }

  if (window.customElements && !customElements.get("calendar-events")) {
    customElements.define("calendar-events", CalendarEvents);
  }
}());
