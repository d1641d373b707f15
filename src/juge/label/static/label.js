// Keyboard labelling: one key per label (data-key on each button), e opens the note box, u undoes.
// Keys are ignored while typing in a text field; Esc leaves the note box.
(function () {
  "use strict";
  var note = document.getElementById("explanation");
  var toggle = document.getElementById("explain-toggle");
  var busy = false;

  function openNote() {
    if (!note) return;
    note.hidden = false;
    note.focus();
  }
  if (toggle) toggle.addEventListener("click", openNote);

  function press(button) {
    if (busy) return;  // one label per page: a held key must not submit twice
    busy = true;
    if (button.form && typeof button.form.requestSubmit === "function") {
      button.form.requestSubmit(button);
    } else {
      button.click();
    }
  }

  document.addEventListener("keydown", function (event) {
    var target = event.target;
    var typing = target && (target.tagName === "TEXTAREA" || target.tagName === "INPUT" || target.tagName === "SELECT");
    if (typing) {
      if (event.key === "Escape") target.blur();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var key = event.key.toLowerCase();
    if (key === "e" && note) { event.preventDefault(); openNote(); return; }
    var buttons = document.querySelectorAll("button[data-key]");
    for (var i = 0; i < buttons.length; i++) {
      if (buttons[i].getAttribute("data-key") === key && buttons[i].type === "submit") {
        event.preventDefault();
        press(buttons[i]);
        return;
      }
    }
  });
})();
