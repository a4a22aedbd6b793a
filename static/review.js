// The review queue by keyboard: j/k move between waiting facts, a approves, r rejects,
// e edits the value, x selects for the bulk buttons. Keys act on the fact that has focus (or
// holds it); typing in a field is left alone. After htmx swaps the queue in, focus goes to the
// fact now at the same place, so a reviewer can keep pressing "a". Each key's effect, and the
// server's answer after a swap, is said in the page's live region (#review-announce) for screen readers.
(function () {
  "use strict";
  let position = 0;

  function say(text) {
    const region = document.getElementById("review-announce");
    if (!region) return;
    // Emptied first, so that the same words said twice in a row are announced twice.
    region.textContent = "";
    window.setTimeout(function () { region.textContent = text; }, 50);
  }

  function describe(item) {
    return item.getAttribute("aria-label") || item.textContent.trim();
  }

  function items() {
    return Array.from(document.querySelectorAll("[data-review-list] .review-item"));
  }

  function focusAt(index) {
    const list = items();
    if (!list.length) return;
    position = Math.max(0, Math.min(index, list.length - 1));
    list[position].focus();
    return list[position];
  }

  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target;
    if (target.matches("input:not([type=checkbox]), textarea, select")) return;
    const list = items();
    const current = target.closest && target.closest(".review-item");
    const index = current ? list.indexOf(current) : -1;
    if (event.key === "j" || event.key === "k") {
      event.preventDefault();
      const item = focusAt(index < 0 ? 0 : index + (event.key === "j" ? 1 : -1));
      if (item) say("Fact " + (position + 1) + " of " + list.length + ": " + describe(item) + ".");
      else say("Nothing waits for review.");
      return;
    }
    if (!current) return;
    position = index;
    if (event.key === "a" || event.key === "r") {
      event.preventDefault();
      say((event.key === "a" ? "Approving " : "Rejecting ") + describe(current) + "…");
      current.querySelector('[data-key="' + event.key + '"]').click();
    } else if (event.key === "e") {
      event.preventDefault();
      const field = current.querySelector('[data-key="e"]');
      field.focus();
      field.select();
      say("Editing the value of " + describe(current) + ": type the correction, then press Enter to correct and approve.");
    } else if (event.key === "x") {
      event.preventDefault();
      const box = current.querySelector(".pick");
      box.checked = !box.checked;
      say((box.checked ? "Selected " : "Unselected ") + describe(current) + ".");
    }
  });

  document.addEventListener("htmx:afterSwap", function (event) {
    if (event.target.id !== "queue" && event.detail.target.id !== "queue") return;
    focusAt(position);
    const answer = document.querySelector("#queue [role=status], #queue [role=alert]");
    if (answer) say(answer.textContent.trim());
  });
})();
