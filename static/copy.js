// "Copy" buttons: data-copy names the field whose text goes to the clipboard. The Clipboard API
// needs a secure context (https or localhost); elsewhere the field is selected and copied the old
// way, or left selected for the person to copy.
(function () {
  "use strict";
  document.addEventListener("click", function (event) {
    const button = event.target.closest("[data-copy]");
    if (!button) return;
    const field = document.querySelector(button.dataset.copy);
    const status = button.parentElement.querySelector("[data-copy-status]");
    const say = function (text) { if (status) status.textContent = text; };
    const fallback = function () {
      field.focus();
      field.select();
      let copied = false;
      try { copied = document.execCommand("copy"); } catch (e) { copied = false; }
      say(copied ? "Copied." : "Selected: press Ctrl+C (⌘C) to copy.");
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(field.value).then(function () { say("Copied."); }, fallback);
    } else {
      fallback();
    }
  });
})();
