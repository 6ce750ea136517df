// deploy-web: the few lines of behaviour HTMX does not cover.
// After each swap, mark the tree node whose resource panel is open.
document.addEventListener("htmx:afterSettle", function () {
  var panel = document.querySelector("[data-testid=resource-panel]");
  var ref = panel ? panel.getAttribute("data-ref") : "";
  document.querySelectorAll("svg.tree a[data-ref]").forEach(function (a) {
    var node = a.querySelector(".node");
    if (node) node.classList.toggle("selected", a.getAttribute("data-ref") === ref);
  });
});
