package dev.uatu.sdk.android

import android.app.Activity
import android.app.AlertDialog
import android.os.Bundle
import android.view.View
import android.view.ViewGroup
import android.widget.ArrayAdapter
import android.widget.Button
import android.widget.EditText
import android.widget.FrameLayout
import android.widget.LinearLayout
import android.widget.ListView
import android.widget.TextView

/**
 * A screen like an app's: nested layouts, an edit text, a disabled button, an
 * invisible view and a list, all sized in pixels so their bounds are known.
 */
class FormActivity : Activity() {
    override fun onCreate(savedInstanceState: Bundle?) {
        setTheme(android.R.style.Theme_DeviceDefault_NoActionBar)
        super.onCreate(savedInstanceState)
        val root = LinearLayout(this).apply {
            orientation = LinearLayout.VERTICAL
            setPadding(10, 10, 10, 10)
        }
        val header = FrameLayout(this)
        header.addView(
            TextView(this).apply {
                id = android.R.id.title
                text = "Ledger"
            },
            FrameLayout.LayoutParams(100, 30),
        )
        root.addView(header, LinearLayout.LayoutParams(ViewGroup.LayoutParams.MATCH_PARENT, 40))
        root.addView(
            EditText(this).apply {
                id = android.R.id.edit
                setText("note")
            },
            LinearLayout.LayoutParams(ViewGroup.LayoutParams.MATCH_PARENT, 50),
        )
        root.addView(
            Button(this).apply {
                id = android.R.id.button1
                text = "Submit"
                contentDescription = "Submit transaction"
                isEnabled = false
            },
            LinearLayout.LayoutParams(ViewGroup.LayoutParams.MATCH_PARENT, 50),
        )
        root.addView(
            View(this).apply {
                id = android.R.id.empty
                visibility = View.INVISIBLE
            },
            LinearLayout.LayoutParams(ViewGroup.LayoutParams.MATCH_PARENT, 20),
        )
        val rows = (0 until 50).map { "item $it" }
        root.addView(
            ListView(this).apply {
                id = android.R.id.list
                adapter = object : ArrayAdapter<String>(this@FormActivity, android.R.layout.simple_list_item_1, rows) {
                    override fun getView(position: Int, convertView: View?, parent: ViewGroup): View =
                        super.getView(position, convertView, parent).apply {
                            contentDescription = "row_$position"
                            layoutParams = ViewGroup.LayoutParams(ViewGroup.LayoutParams.MATCH_PARENT, 40)
                        }
                }
            },
            LinearLayout.LayoutParams(ViewGroup.LayoutParams.MATCH_PARENT, 200),
        )
        setContentView(root)
    }

    fun showDialog(): AlertDialog = AlertDialog.Builder(this)
        .setMessage("Delete the note?")
        .setPositiveButton("Delete", null)
        .show()
}
