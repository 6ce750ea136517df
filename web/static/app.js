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
