// The page's visible elements as uatu-device `Node` JSON (see docs/devices.md, "## Web").
// Evaluated in the page; returns {root, screen}.
(() => {
  const INTERACTIVE_TAGS = new Set(['A', 'BUTTON', 'INPUT', 'SELECT', 'TEXTAREA', 'LABEL', 'SUMMARY', 'OPTION']);
  const INTERACTIVE_ROLES = new Set(['button', 'link', 'checkbox', 'radio', 'switch', 'textbox', 'searchbox',
    'combobox', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'option', 'tab', 'slider', 'spinbutton', 'treeitem']);
  const FIELD_TAGS = new Set(['INPUT', 'TEXTAREA', 'SELECT']);
  const SKIPPED_TAGS = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'META', 'LINK']);
  // The focused element itself: inside a shadow root, document.activeElement is only its host.
  let active = document.activeElement;
  while (active && active.shadowRoot && active.shadowRoot.activeElement) active = active.shadowRoot.activeElement;
  const squash = (s) => s.replace(/\s+/g, ' ').trim();

  // A node for `el`, or its visible descendants when `el` itself shows nothing.
  const visit = (el, out) => {
    if (SKIPPED_TAGS.has(el.tagName)) return '';
    const style = getComputedStyle(el);
    if (style.display === 'none') return '';
    const children = [];
    let text = '';
    for (const child of el.childNodes) {
      if (child.nodeType === Node.TEXT_NODE) text += child.data;
      else if (child.nodeType === Node.ELEMENT_NODE) text += ' ' + visit(child, children) + ' ';
    }
    for (const child of el.shadowRoot ? el.shadowRoot.children : []) {
      text += ' ' + visit(child, children) + ' ';
    }
    const rect = el.getBoundingClientRect();
    const shown = style.visibility !== 'hidden' && rect.width > 0 && rect.height > 0;
    text = squash(text);
    if (!shown) {
      out.push(...children);
      return text;
    }
    const tag = el.tagName.toLowerCase();
    const role = el.computedRole || el.getAttribute('role') || '';
    const isField = FIELD_TAGS.has(el.tagName);
    const checkable = el.type === 'checkbox' || el.type === 'radio';
    const ariaChecked = el.getAttribute('aria-checked');
    const classes = typeof el.className === 'string' ? el.className.trim().split(/\s+/).filter(Boolean) : [];
    const tabindex = el.getAttribute('tabindex');
    const scrolls = (style.overflowY === 'auto' || style.overflowY === 'scroll') && el.scrollHeight > el.clientHeight;
    out.push({
      id: el.id || el.getAttribute('data-testid') || '',
      text: isField && !checkable ? String(el.value ?? '') : text,
      desc: el.computedName ?? el.getAttribute('aria-label') ?? '',
      class: [tag, ...classes].join('.'),
      package: role,
      clickable: INTERACTIVE_TAGS.has(el.tagName) || INTERACTIVE_ROLES.has(role) || el.hasAttribute('onclick')
        || (tabindex !== null && Number(tabindex) >= 0),
      enabled: !el.disabled && el.getAttribute('aria-disabled') !== 'true',
      checked: checkable ? el.checked : ariaChecked === 'true',
      focused: el === active,
      selected: el.selected === true || el.getAttribute('aria-selected') === 'true'
        || (el.getAttribute('aria-current') ?? 'false') !== 'false',
      scrollable: scrolls,
      bounds: {
        left: Math.floor(rect.left), top: Math.floor(rect.top),
        right: Math.ceil(rect.right), bottom: Math.ceil(rect.bottom),
      },
      children,
    });
    return isField ? '' : text;
  };

  const top = [];
  if (document.body) visit(document.body, top);
  const scroller = document.scrollingElement;
  const width = window.innerWidth;
  const height = window.innerHeight;
  return {
    root: {
      class: 'document',
      text: location.href,
      desc: document.title,
      enabled: true,
      scrollable: !!scroller && scroller.scrollHeight > scroller.clientHeight,
      bounds: { left: 0, top: 0, right: width, bottom: height },
      children: top,
    },
    screen: { width, height },
  };
})()
