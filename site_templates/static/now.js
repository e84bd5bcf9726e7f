/* Keeps a built page right on the day it is read, however long ago it was built:
   events that have ended leave the upcoming lists (with a note), the month grid's
   "Today" moves to the real today and the header's "Month" link to the real month.
   Dates are the calendar's (its time zone, from calendar-data.js), not the reader's.
   Without this script the page is right on the day it was built. */
(function () {
  "use strict";
  var site = window.calendarSite;
  if (!site) { return; }
  var now = new Date();
  var today = localDay(now, site.timezone);

  // The page's language's text for `n` (calendar-data.js has one a plural category).
  function counted(site, key, n) {
    var forms = site.plurals[key];
    var form = forms[new Intl.PluralRules(site.lang).select(n)] || forms.other;
    return form.replace("{n}", String(n));
  }
  window.calendarCounted = counted;

  function localDay(moment, zone) {
    var parts = {};
    new Intl.DateTimeFormat("en-US", {timeZone: zone, year: "numeric", month: "2-digit",
                                      day: "2-digit"})
      .formatToParts(moment).forEach(function (p) { parts[p.type] = p.value; });
    return parts.year + "-" + parts.month + "-" + parts.day;
  }

  function hideEnded(list) {
    var ended = 0;
    list.querySelectorAll("article[data-end]").forEach(function (item) {
      if (Date.parse(item.getAttribute("data-end")) < now.getTime()) {
        item.parentNode.hidden = true;
        ended += 1;
      }
    });
    if (!ended) { return; }
    list.querySelectorAll("ol.event-list").forEach(function (ol) {
      var heading = ol.previousElementSibling;
      if (heading && heading.classList.contains("month-separator")) {
        heading.hidden = !ol.querySelector("li:not([hidden])");
      }
    });
    var note = list.querySelector(".ended-note");
    note.querySelector(".ended-count").textContent = counted(site, "ended", ended);
    note.hidden = false;
  }

  function moveToday() {
    var grid = document.querySelector(".month-grid");
    if (!grid) { return; }
    var old = grid.querySelector("[data-date].today");
    var cell = grid.querySelector('[data-date="' + today + '"]');
    if (old === cell) { return; }
    var label = old && old.querySelector(".today-label");
    if (old) {
      old.classList.remove("today");
      old.removeAttribute("aria-current");
    }
    if (!cell) {
      if (label) { label.remove(); }
      return;
    }
    if (!label) {
      label = document.createElement("span");
      label.className = "today-label";
      label.textContent = site.text.today;
    }
    cell.classList.add("today");
    cell.setAttribute("aria-current", "date");
    (cell.querySelector(".day-number") || cell).append(" ", label);
  }

  function fixMonthLink() {
    var month = today.slice(0, 7);
    // Month pages exist from the first to the last month of the calendar.
    if (month < site.firstMonth) { month = site.firstMonth; }
    if (month > site.lastMonth) { month = site.lastMonth; }
    document.querySelectorAll("a[data-month-link]").forEach(function (link) {
      link.setAttribute("href", link.getAttribute("href").replace(/\d{4}-\d{2}(?=\/)/, month));
    });
  }

  document.querySelectorAll("[data-upcoming]").forEach(hideEnded);
  // A recurring event's "Upcoming dates" (the count of further dates stays as built).
  document.querySelectorAll(".event-dates li[data-end]").forEach(function (item) {
    if (Date.parse(item.getAttribute("data-end")) < now.getTime()) { item.hidden = true; }
  });
  moveToday();
  fixMonthLink();
})();
