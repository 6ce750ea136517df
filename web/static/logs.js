// deploy-web log viewer: keeps the newest 5,000 lines on the page and
// follows the bottom unless the reader scrolled up (then a button jumps back).
(function () {
  "use strict";
  var MAX = 5000;
  function box() { return document.getElementById("log-box"); }
  function atBottom(b) { return b.scrollHeight - b.scrollTop - b.clientHeight < 40; }
  function settle() {
    var b = box();
    if (!b) return;
    var lines = document.getElementById("log-lines");
    var extra = lines ? lines.childElementCount - MAX : 0;
    if (extra > 0) {
      var r = document.createRange();
      r.setStartBefore(lines.firstElementChild);
      r.setEndBefore(lines.children[extra]);
      r.deleteContents();
      b.classList.add("trimmed");
    }
    if (!b.classList.contains("paused")) b.scrollTop = b.scrollHeight;
  }
  document.addEventListener("scroll", function (e) {
    var b = box();
    if (b && e.target === b) b.classList.toggle("paused", !atBottom(b));
  }, true);
  document.addEventListener("click", function (e) {
    var b = box();
    if (b && e.target.closest && e.target.closest("#log-jump")) { b.classList.remove("paused"); b.scrollTop = b.scrollHeight; }
  });
  document.addEventListener("htmx:sseMessage", settle);
  document.addEventListener("htmx:afterSettle", settle);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", settle); else settle();
})();
