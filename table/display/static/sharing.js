// Café sharing (docs/mqtt.md): while the table cannot publish to the broker, a small note in the corner above the footer
// says "scores not shared: <why>" (the snapshot's `sharing`: {ok, text}; null when no broker is set).
(function () {
  "use strict";
  function renderSharing(s) {
    let box = document.getElementById("sharing");
    if (!box) {
      box = document.createElement("div");
      box.id = "sharing";
      box.className = "sharing";
      box.hidden = true;
      (document.querySelector("footer.bar") || document.body).appendChild(box);
    }
    const sh = s.sharing;
    box.hidden = !sh || sh.ok;
    box.textContent = sh && !sh.ok ? sh.text : "";
  }
  (window.onTableSnapshot = window.onTableSnapshot || []).push(renderSharing);
})();
