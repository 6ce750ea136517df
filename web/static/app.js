// deploy-web: the few lines of behaviour HTMX does not cover.
// Keep the selected tree node in view (the tree scales to its column and
// scrolls vertically); nothing here runs at load unless a node is selected.
function showSelectedNode() {
  var a = document.querySelector("svg.tree a .node.selected");
  if (a && a.parentNode.scrollIntoView) a.parentNode.scrollIntoView({ block: "nearest", inline: "nearest" });
}
document.addEventListener("DOMContentLoaded", showSelectedNode);
// After each swap, mark the tree node whose resource panel is open.
document.addEventListener("htmx:afterSettle", function (e) {
  var panel = document.querySelector("[data-testid=resource-panel]");
  var ref = panel ? panel.getAttribute("data-ref") : "";
  document.querySelectorAll("svg.tree a[data-ref]").forEach(function (a) {
    var node = a.querySelector(".node");
    if (node) node.classList.toggle("selected", a.getAttribute("data-ref") === ref);
  });
  if (e.target && e.target.id === "panel") {
    showSelectedNode();
    showPanel(panel);
  }
});
// In one column (a phone, a narrow window) the panel sits below the tree
// and the history: bring it into view when it opens or changes tab.
function showPanel(panel) {
  var layout = document.querySelector(".app-layout");
  if (!panel || !layout || getComputedStyle(layout).gridTemplateColumns.split(" ").length > 1) return;
  var r = panel.getBoundingClientRect();
  if (r.top < 0 || r.top > window.innerHeight / 2) panel.scrollIntoView({ block: "start" });
}
// Folds (fold.templ): sections drawn open with data-fold="narrow" start
// folded on a narrow screen (the width at which app.css stacks the
// page), so that its first screen holds the state and the actions; a
// fold the address points into, or at (#notifications), stays open.
//
// A <details> with an id keeps the state its reader gave it when HTMX
// swaps in a fresh copy (the GitOps panel every 10 seconds, the plan
// history after a run): each state given here or by a click (a tap, or
// Enter or Space on the summary) is remembered by id and put back once
// the swap has settled (HTMX's settle puts the new copy's attributes,
// "open" among them, back after the swap itself). Toggle events are no
// guide: a fresh copy drawn open fires one too.
var detailsOpen = new Map();
function setOpen(d, open) {
  d.open = open;
  if (d.id) detailsOpen.set(d.id, open);
}
function hashTarget() {
  if (location.hash.length < 2) return null;
  try { return document.getElementById(decodeURIComponent(location.hash.slice(1))); } catch (e) { return null; }
}
document.addEventListener("DOMContentLoaded", function () {
  if (!window.matchMedia("(max-width: 700px)").matches) return;
  var target = hashTarget();
  document.querySelectorAll("details[data-fold=narrow]").forEach(function (d) {
    if (!target || !(d.contains(target) || target.contains(d))) setOpen(d, false);
  });
});
// An address into a folded section opens it.
window.addEventListener("hashchange", function () {
  for (var el = hashTarget(); el; el = el.parentElement) if (el.tagName === "DETAILS") setOpen(el, true);
});
document.addEventListener("click", function (e) {
  var s = e.target.closest ? e.target.closest("summary") : null;
  var d = s ? s.parentElement : null;
  if (d && d.tagName === "DETAILS" && d.id && d.querySelector(":scope > summary") === s) detailsOpen.set(d.id, !d.open);
});
document.addEventListener("htmx:afterSettle", function () {
  detailsOpen.forEach(function (open, id) {
    var d = document.getElementById(id);
    if (d && d.tagName === "DETAILS" && d.open !== open) d.open = open;
  });
});
// "/" focuses the top bar's search box, unless the person is typing in a
// field (or holds a modifier).
document.addEventListener("keydown", function (e) {
  if (e.key !== "/" || e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented) return;
  var t = e.target;
  if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
  var box = document.querySelector("[data-testid=topbar-search-input]");
  if (!box) return;
  e.preventDefault();
  box.focus();
  box.select();
});
// The theme picker: the choice goes into the "theme" cookie (the server
// draws it on <html data-theme> at the next load, so there is no flash)
// and onto this page at once; "system" follows prefers-color-scheme.
document.addEventListener("change", function (e) {
  var t = e.target;
  if (!t || t.getAttribute("data-testid") !== "theme-toggle") return;
  var v = t.value === "light" || t.value === "dark" ? t.value : "system";
  document.cookie = "theme=" + v + "; Path=/; Max-Age=31536000; SameSite=Lax" + (location.protocol === "https:" ? "; Secure" : "");
  if (v === "system") document.documentElement.removeAttribute("data-theme");
  else document.documentElement.setAttribute("data-theme", v);
});
