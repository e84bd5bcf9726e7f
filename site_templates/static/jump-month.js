/* "Jump to month": shows the month field of the menu and goes to the month chosen.
   The links under it work without this script. */
(function () {
  "use strict";
  document.querySelectorAll(".jump-month").forEach(function (menu) {
    var form = menu.querySelector("form");
    var field = form.querySelector("input");
    var error = form.querySelector(".jump-month-error");
    form.hidden = false;
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      // Browsers without a month picker give the text as typed: accept 2027-3 too.
      var match = /^(\d{4})-(\d{1,2})$/.exec(field.value.trim());
      var month = match ? match[1] + "-" + ("0" + match[2]).slice(-2) : "";
      var link = month && menu.querySelector('a[data-month="' + month + '"]');
      if (link) {
        window.location.href = link.href;
      } else {
        error.textContent = window.calendarSite.text.month_range
          .replace("{min}", field.min).replace("{max}", field.max);
      }
    });
  });
})();
